//! Content negotiation for HTTP 406: does a request's `Accept` header admit any of the media
//! types an endpoint answers with? Follows RFC 9110 §12.5.1: the most specific media range that
//! matches a type decides its quality, and quality 0 means "not acceptable".

/// Whether `accept` (the header's value) admits at least one of `offered` (media types, with or
/// without parameters). An empty header admits everything.
pub fn acceptable(accept: &str, offered: &[String]) -> bool {
    let ranges: Vec<Range<'_>> = accept.split(',').filter_map(Range::parse).collect();
    if ranges.is_empty() {
        return true;
    }
    offered.iter().any(|media_type| {
        let essence = media_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        let Some((ty, subtype)) = essence.split_once('/') else { return false };
        ranges
            .iter()
            .filter_map(|r| r.specificity(ty, subtype).map(|s| (s, r.quality)))
            .max_by_key(|(specificity, _)| *specificity)
            .is_some_and(|(_, quality)| quality > 0.0)
    })
}

/// One media range of an `Accept` header.
struct Range<'a> {
    ty: &'a str,
    subtype: &'a str,
    quality: f32,
}

impl<'a> Range<'a> {
    fn parse(text: &'a str) -> Option<Range<'a>> {
        let mut parts = text.split(';');
        let (ty, subtype) = parts.next()?.trim().split_once('/')?;
        let mut quality = 1.0;
        for param in parts {
            if let Some((name, value)) = param.split_once('=')
                && name.trim().eq_ignore_ascii_case("q")
            {
                quality = value.trim().parse().unwrap_or(1.0);
            }
        }
        Some(Range { ty: ty.trim(), subtype: subtype.trim(), quality })
    }

    /// How specifically this range names `ty/subtype` (2 exact, 1 `ty/*`, 0 `*/*`), or `None`.
    fn specificity(&self, ty: &str, subtype: &str) -> Option<u8> {
        match (self.ty, self.subtype) {
            ("*", "*") => Some(0),
            (t, "*") if t.eq_ignore_ascii_case(ty) => Some(1),
            (t, s) if t.eq_ignore_ascii_case(ty) && s.eq_ignore_ascii_case(subtype) => Some(2),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json() -> Vec<String> {
        vec!["application/json; charset=utf-8".to_owned()]
    }

    #[test]
    fn json_is_acceptable_when_named_or_covered_by_a_wildcard() {
        for accept in [
            "",
            "*/*",
            "application/json",
            "Application/JSON",
            "application/*",
            "text/html, application/xhtml+xml, */*;q=0.8",
            "text/plain;q=0.5, application/json;q=0.1",
        ] {
            assert!(acceptable(accept, &json()), "{accept:?} admits JSON");
        }
    }

    #[test]
    fn json_is_not_acceptable_when_excluded() {
        for accept in [
            "text/html",
            "text/plain, text/csv",
            "application/xml",
            "application/json;q=0",
            "*/*, application/json;q=0",
        ] {
            assert!(!acceptable(accept, &json()), "{accept:?} excludes JSON");
        }
    }

    #[test]
    fn any_offered_type_is_enough() {
        let offered = vec!["text/vtt; charset=utf-8".to_owned(), "application/json".to_owned()];
        assert!(acceptable("text/vtt", &offered));
        assert!(!acceptable("text/csv", &offered));
    }
}
