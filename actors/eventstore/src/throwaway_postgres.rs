//! A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` and `pg_ctl` in a temporary
//! directory, reachable only through a unix socket in that directory, stopped and deleted when the
//! value is dropped (also when a test panics). Test support: it exists with the crate's `testing`
//! feature only.
//!
//! PostgreSQL refuses to run as root, so when this process is root the cluster runs as the
//! `postgres` system user (created by Debian's `postgresql` package, which `ops/setup.sh`
//! installs). The binaries are taken from `SCRIBE_PG_BIN` if set, else from `PATH`, else from the
//! newest `/usr/lib/postgresql/<version>/bin`.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use scribe_eventstore::throwaway_postgres::ThrowawayPostgres;
//! let cluster = ThrowawayPostgres::start(false)?;
//! let url = cluster.create_database("scribe").await?;
//! let store = scribe_eventstore::PostgresEventStore::connect(&url).await;
//! # Ok(()) }
//! ```

use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use tempfile::TempDir;

/// The superuser every throwaway cluster has (trust authentication, socket only).
pub const SUPERUSER: &str = "scribe";
/// The port number in the socket's name (`.s.PGSQL.5432`); nothing listens on TCP.
const PORT: u16 = 5432;

/// A running throwaway cluster. Dropping it stops the server and deletes its files.
pub struct ThrowawayPostgres {
    dir: TempDir,
    bin: PathBuf,
    /// The unprivileged user and group the server runs as, when this process is root.
    run_as: Option<(u32, u32)>,
    stopped: bool,
}

impl ThrowawayPostgres {
    /// Creates and starts a cluster. `durable: false` turns off `fsync` and friends: right for
    /// tests, wrong for a benchmark that means to measure real commits.
    pub fn start(durable: bool) -> io::Result<Self> {
        let bin = find_binaries()?;
        let run_as = if running_as_root()? { Some(system_user("postgres")?) } else { None };
        let dir = tempfile::Builder::new().prefix("scribe-pg-").tempdir()?;
        if let Some((uid, gid)) = run_as {
            rustix::fs::chown(dir.path(), Some(rustix::fs::Uid::from_raw(uid)), Some(rustix::fs::Gid::from_raw(gid)))
                .map_err(io::Error::from)?;
        }
        let mut cluster = ThrowawayPostgres { dir, bin, run_as, stopped: true };
        let data = cluster.data_dir();
        cluster.run(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                SUPERUSER.as_ref(),
                "-A".as_ref(),
                "trust".as_ref(),
                "-E".as_ref(),
                "UTF8".as_ref(),
                "--locale=C".as_ref(),
                "--no-sync".as_ref(),
            ],
        )?;
        let mut options =
            format!("-c listen_addresses='' -k {} -p {PORT} -c max_connections=200", cluster.socket_dir().display());
        if !durable {
            options.push_str(" -c fsync=off -c synchronous_commit=off -c full_page_writes=off");
        }
        let log = cluster.dir.path().join("server.log");
        cluster.stopped = false;
        let started = cluster.run(
            "pg_ctl",
            &[
                "start".as_ref(),
                "-D".as_ref(),
                data.as_os_str(),
                "-w".as_ref(),
                "-t".as_ref(),
                "60".as_ref(),
                "-l".as_ref(),
                log.as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
            ],
        );
        if let Err(error) = started {
            let server_log = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(io::Error::other(format!("{error}\nserver log:\n{server_log}")));
        }
        Ok(cluster)
    }

    /// The directory holding the server's unix socket.
    pub fn socket_dir(&self) -> &Path {
        self.dir.path()
    }

    /// A `postgres://` URL for `database` on this cluster (the socket directory percent-encoded
    /// as the host, as libpq and tokio-postgres read it).
    pub fn url(&self, database: &str) -> String {
        let host = utf8_percent_encode(&self.socket_dir().to_string_lossy(), NON_ALPHANUMERIC).to_string();
        format!("postgres://{SUPERUSER}@{host}:{PORT}/{database}")
    }

    /// Creates `database` if it does not exist yet and returns its URL.
    pub async fn create_database(&self, database: &str) -> io::Result<String> {
        let (client, connection) =
            tokio_postgres::connect(&self.url("postgres"), tokio_postgres::NoTls).await.map_err(io::Error::other)?;
        let driver = tokio::spawn(connection);
        let exists = client
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&database])
            .await
            .map_err(io::Error::other)?
            .is_some();
        if !exists {
            let quoted = database.replace('"', "\"\"");
            client.batch_execute(&format!("CREATE DATABASE \"{quoted}\"")).await.map_err(io::Error::other)?;
        }
        drop(client);
        let _ = driver.await;
        Ok(self.url(database))
    }

    fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs one of the PostgreSQL programs, as the unprivileged user when we are root.
    fn run(&self, program: &str, args: &[&std::ffi::OsStr]) -> io::Result<()> {
        let mut command = Command::new(self.bin.join(program));
        command
            .args(args)
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some((uid, gid)) = self.run_as {
            use std::os::unix::process::CommandExt;
            command.uid(uid).gid(gid);
        }
        let output = command.output().map_err(|e| io::Error::other(format!("cannot run {program}: {e}")))?;
        if output.status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!(
                "{program} failed ({}): {}{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )))
        }
    }

    /// Stops the server now (an immediate shutdown: it is thrown away anyway).
    pub fn stop(&mut self) -> io::Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        let data = self.data_dir();
        self.run(
            "pg_ctl",
            &["stop".as_ref(), "-D".as_ref(), data.as_os_str(), "-m".as_ref(), "immediate".as_ref(), "-w".as_ref()],
        )
    }
}

impl Drop for ThrowawayPostgres {
    fn drop(&mut self) {
        if let Err(error) = self.stop() {
            eprintln!("could not stop the throwaway PostgreSQL cluster: {error}");
        }
    }
}

/// The directory with `initdb` and `pg_ctl`.
fn find_binaries() -> io::Result<PathBuf> {
    if let Some(dir) = std::env::var_os("SCRIBE_PG_BIN") {
        return Ok(PathBuf::from(dir));
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file());
    if let Some(dir) = on_path {
        return Ok(dir);
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        io::Error::other(
            "PostgreSQL's initdb and pg_ctl were not found (install Debian's postgresql package with `bash ops/setup.sh`, or set SCRIBE_PG_BIN to their directory)",
        )
    })
}

/// Whether this process runs as root (the owner of `/proc/self`).
fn running_as_root() -> io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    Ok(std::fs::metadata("/proc/self")?.uid() == 0)
}

/// The uid and gid of a system user, from `id`.
fn system_user(name: &str) -> io::Result<(u32, u32)> {
    let id = |flag: &str| -> io::Result<u32> {
        let output = Command::new("id").arg(flag).arg(name).output()?;
        let text = String::from_utf8_lossy(&output.stdout);
        text.trim().parse().map_err(|_| {
            io::Error::other(format!(
                "running as root, PostgreSQL needs the unprivileged user {name:?}, which does not exist (install Debian's postgresql package with `bash ops/setup.sh`)"
            ))
        })
    };
    Ok((id("-u")?, id("-g")?))
}
