//! Decides whether a client-supplied URL (`sourceUrl`, `callbackUrl`) may be contacted.
//!
//! A URL that reaches loopback, a private network, link-local addresses (the cloud metadata
//! service at 169.254.169.254) or other non-public ranges would let a client use Scribe to probe
//! the operator's network (SSRF). The guard resolves the host once and returns the vetted socket
//! addresses; the HTTP client must connect to exactly those (reqwest `resolve_to_addrs`), so a
//! second DNS answer cannot swap in a private address (DNS rebinding). Operators may allow private
//! addresses (tests do, on loopback).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use url::{Host, Url};

#[derive(Debug, thiserror::Error)]
pub enum GuardError {
    #[error("only http and https URLs can be fetched, not {0}:")]
    UnsupportedScheme(String),
    #[error("the URL has no host")]
    MissingHost,
    #[error("the host {host} could not be resolved: {reason}")]
    Unresolvable { host: String, reason: String },
    #[error("the host {host} resolves to the non-public address {addr}, which is refused")]
    PrivateAddress { host: String, addr: IpAddr },
}

/// A URL that passed the guard, with the only addresses it may be contacted on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VettedUrl {
    pub url: Url,
    /// The host as written in the URL (a domain or an IP literal).
    pub host: String,
    /// `Some` when the host is a domain name: the addresses it resolved to. Pin the connection to
    /// them (`ClientBuilder::resolve_to_addrs(host, addrs)`). `None` for IP literals.
    pub resolved: Option<Vec<SocketAddr>>,
}

impl VettedUrl {
    /// A reqwest client builder that can only reach this URL's vetted addresses: DNS answers are
    /// pinned, redirects are not followed (each hop must be checked again) and no proxy is used
    /// (a proxy would connect wherever it likes). Add timeouts and build.
    pub fn pinned_client(&self) -> reqwest::ClientBuilder {
        let builder = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).no_proxy();
        match &self.resolved {
            Some(addrs) => builder.resolve_to_addrs(&self.host, addrs),
            None => builder,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct AddressGuard {
    allow_private: bool,
}

impl AddressGuard {
    /// `allow_private = true` lets URLs reach loopback and private networks (operator's choice).
    pub fn new(allow_private: bool) -> Self {
        AddressGuard { allow_private }
    }

    /// Checks the scheme, resolves the host and checks every address it resolves to.
    pub async fn check(&self, url: &Url) -> Result<VettedUrl, GuardError> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(GuardError::UnsupportedScheme(url.scheme().to_owned()));
        }
        let port = url.port_or_known_default().unwrap_or(80);
        let host = url.host().ok_or(GuardError::MissingHost)?;
        let host_text = host.to_string();
        let (addrs, resolved) = match host {
            Host::Ipv4(ip) => (vec![SocketAddr::new(IpAddr::V4(ip), port)], false),
            Host::Ipv6(ip) => (vec![SocketAddr::new(IpAddr::V6(ip), port)], false),
            Host::Domain(domain) => {
                let found = tokio::net::lookup_host((domain, port))
                    .await
                    .map_err(|e| GuardError::Unresolvable { host: host_text.clone(), reason: e.to_string() })?;
                let mut addrs: Vec<SocketAddr> = found.collect();
                addrs.dedup();
                if addrs.is_empty() {
                    return Err(GuardError::Unresolvable { host: host_text, reason: "no addresses".into() });
                }
                (addrs, true)
            }
        };
        if !self.allow_private {
            // One bad address refuses the host: a name mixing public and private answers is suspect.
            if let Some(bad) = addrs.iter().find(|a| !is_public(a.ip())) {
                return Err(GuardError::PrivateAddress { host: host_text, addr: bad.ip() });
            }
        }
        Ok(VettedUrl { url: url.clone(), host: host_text, resolved: resolved.then_some(addrs) })
    }
}

/// Whether `ip` is a globally routable unicast address.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let refused = ip.is_unspecified()
        || a == 0                                   // 0.0.0.0/8 "this network"
        || ip.is_loopback()                         // 127.0.0.0/8
        || ip.is_private()                          // 10/8, 172.16/12, 192.168/16
        || ip.is_link_local()                       // 169.254/16, incl. metadata 169.254.169.254
        || (a == 100 && (64..128).contains(&b))     // 100.64/10 carrier-grade NAT
        || (a == 192 && b == 0 && c == 0)           // 192.0.0/24 IETF protocol assignments
        || ip.is_documentation()                    // 192.0.2/24, 198.51.100/24, 203.0.113/24
        || (a == 198 && (b == 18 || b == 19))       // 198.18/15 benchmarking
        || ip.is_multicast()                        // 224/4
        || a >= 240; // 240/4 reserved, incl. broadcast 255.255.255.255
    !refused
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return is_public_v4(v4);
    }
    let first = ip.segments()[0];
    let refused = ip.is_unspecified()
        || ip.is_loopback()
        || (first & 0xfe00) == 0xfc00               // fc00::/7 unique local
        || (first & 0xffc0) == 0xfe80               // fe80::/10 link-local
        || (first & 0xffc0) == 0xfec0               // fec0::/10 site-local (deprecated)
        || ip.is_multicast()                        // ff00::/8
        || (first == 0x2001 && ip.segments()[1] == 0x0db8) // 2001:db8::/32 documentation
        || (first == 0x0100 && ip.segments()[1..4] == [0, 0, 0]); // 100::/64 discard
    !refused
}

/// The IPv4 address carried inside an IPv6 one, for the forms that reach IPv4 hosts:
/// IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`, 6to4 `2002:AABB:CCDD::`.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if let Some(v4) = ip.to_ipv4_mapped() {
        Some(v4)
    } else if (s[..6] == [0, 0, 0, 0, 0, 0] && !ip.is_loopback() && !ip.is_unspecified())
        || s[..6] == [0x64, 0xff9b, 0, 0, 0, 0]
    {
        Some(low)
    } else if s[0] == 0x2002 {
        Some(Ipv4Addr::new((s[1] >> 8) as u8, s[1] as u8, (s[2] >> 8) as u8, s[2] as u8))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_public_addresses_are_recognised() {
        let refused = [
            "127.0.0.1",
            "127.8.9.10",
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.0.1",
            "100.64.0.1",
            "100.127.255.254",
            "192.0.0.8",
            "192.0.2.1",
            "198.18.0.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "2002:c0a8:101::1",
            "100::1",
        ];
        for text in refused {
            let ip: IpAddr = text.parse().unwrap();
            assert!(!is_public(ip), "{text} must be refused");
        }
        let allowed = [
            "8.8.8.8",
            "1.1.1.1",
            "172.15.255.255",
            "172.32.0.1",
            "100.63.255.255",
            "100.128.0.1",
            "169.253.1.1",
            "192.169.0.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001::200e",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2002:808:808::1",
        ];
        for text in allowed {
            let ip: IpAddr = text.parse().unwrap();
            assert!(is_public(ip), "{text} must be allowed");
        }
    }

    async fn check(allow_private: bool, url: &str) -> Result<VettedUrl, GuardError> {
        AddressGuard::new(allow_private).check(&Url::parse(url).unwrap()).await
    }

    #[tokio::test]
    async fn literal_private_hosts_are_refused() {
        for url in [
            "http://127.0.0.1:8080/a.wav",
            "http://[::1]/a.wav",
            "https://169.254.169.254/latest/meta-data/",
            "http://10.0.0.5/",
            "http://[::ffff:192.168.0.1]/",
            "http://0x7f000001/", // the URL parser normalises this to 127.0.0.1
        ] {
            let result = check(false, url).await;
            assert!(matches!(result, Err(GuardError::PrivateAddress { .. })), "{url}: {result:?}");
        }
    }

    #[tokio::test]
    async fn localhost_is_refused_unless_private_is_allowed() {
        let refused = check(false, "http://localhost:9/x").await;
        match refused {
            Err(GuardError::PrivateAddress { host, addr }) => {
                assert_eq!(host, "localhost");
                assert!(addr.is_loopback());
            }
            other => panic!("localhost must be refused, got {other:?}"),
        }
        let allowed = check(true, "http://localhost:9/x").await.unwrap();
        let addrs = allowed.resolved.expect("a domain is resolved and pinned");
        assert!(!addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback() && a.port() == 9));
        let literal = check(true, "http://127.0.0.1:9/x").await.unwrap();
        assert_eq!(literal.resolved, None, "an IP literal needs no pinning");
    }

    #[tokio::test]
    async fn only_http_and_https_are_fetched() {
        for url in ["ftp://example.com/a.wav", "file:///etc/passwd", "gopher://example.com/"] {
            let result = check(true, url).await;
            assert!(matches!(result, Err(GuardError::UnsupportedScheme(_))), "{url}: {result:?}");
        }
    }

    #[tokio::test]
    async fn unknown_hosts_are_unresolvable() {
        let result = check(false, "http://no-such-host.invalid/a.wav").await;
        assert!(matches!(result, Err(GuardError::Unresolvable { .. })), "{result:?}");
    }
}
