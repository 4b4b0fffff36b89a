//! Where and as whom the NATS clients (`run --nats`, `relay`) connect: the servers of a
//! `--nats` URL and the credentials, a user and password or a token, taken from the URL's
//! userinfo (`nats://user:pass@host`, `nats://token@host`) or from the `--nats-user`,
//! `--nats-password` and `--nats-token` options.
//!
//! async-nats ignores a URL's userinfo and logs server addresses in full at debug level,
//! so the credentials are taken out of every address before it is handed over, and a
//! NATS URL is only ever shown through [`redact`].

use std::fmt;
use std::str::FromStr;

use async_nats::{ConnectOptions, ServerAddr};
use percent_encoding::percent_decode_str;

/// What stands for the credentials in a URL that is shown.
const REDACTED: &str = "***";

/// A password or token: its `Debug` never shows it, so that no struct holding one can
/// print it by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for async-nats only.
    fn expose(&self) -> String {
        self.0.clone()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl FromStr for Secret {
    type Err = std::convert::Infallible;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_string()))
    }
}

/// How a client proves who it is to the NATS server.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum NatsAuth {
    /// No credentials.
    #[default]
    Anonymous,
    /// A user name and password (nats-server's `--user`/`--pass`, `authorization.users`).
    UserPassword {
        /// The user name (not a secret: it may be logged).
        user: String,
        /// The password.
        password: Secret,
    },
    /// A token (nats-server's `--auth`, `authorization.token`).
    Token(Secret),
}

impl NatsAuth {
    fn apply(&self, options: ConnectOptions) -> ConnectOptions {
        match self {
            NatsAuth::Anonymous => options,
            NatsAuth::UserPassword { user, password } => {
                options.user_and_password(user.clone(), password.expose())
            }
            NatsAuth::Token(token) => options.token(token.expose()),
        }
    }

    /// The credentials in a server address's userinfo: `user:password@` or `token@`.
    fn in_address(addr: &ServerAddr) -> NatsAuth {
        let decode = |s: &str| percent_decode_str(s).decode_utf8_lossy().into_owned();
        match (addr.username(), addr.password()) {
            (user, Some(password)) => NatsAuth::UserPassword {
                user: decode(user.unwrap_or_default()),
                password: Secret(decode(password)),
            },
            (Some(token), None) => NatsAuth::Token(Secret(decode(token))),
            (None, None) => NatsAuth::Anonymous,
        }
    }
}

/// Why a `--nats` URL or its credentials cannot be used. Shows the URL redacted only.
#[derive(Debug, thiserror::Error)]
pub enum NatsUrlError {
    /// Two commas in a row, or one at an end.
    #[error("`{0}` has an empty server address")]
    EmptyAddress(String),
    /// Not a URL.
    #[error("`{0}`: {1}")]
    Invalid(String, String),
    /// A scheme other than nats:// and tls://.
    #[error("`{0}`: {1}:// is not supported; use nats:// or tls://")]
    Scheme(String, String),
    /// No host.
    #[error("`{0}` has no host")]
    NoHost(String),
    /// The servers of one URL carry different credentials, but a client has one login.
    #[error("`{0}`: the servers have different credentials")]
    DifferentCredentials(String),
    /// Credentials both in the URL and in the options.
    #[error("`{0}` has credentials and --nats-user or --nats-token gives them again")]
    CredentialsTwice(String),
}

/// The servers to connect to, without credentials, and the credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NatsServers {
    /// The URL as given, credentials redacted: what logs and errors show.
    shown: String,
    addrs: Vec<ServerAddr>,
    auth: NatsAuth,
}

impl NatsServers {
    /// The servers a `--nats` URL names: one address or several separated by commas, each
    /// `nats://[userinfo@]host[:port]` or `tls://…` (a bare `host[:port]` is `nats://`;
    /// the port defaults to 4222). Checked when the command line is read, so that a
    /// mistyped URL stops the daemon at once instead of leaving it retrying something
    /// that can never work; a server that is merely not there yet is waited for.
    pub fn parse(url: &str) -> Result<NatsServers, NatsUrlError> {
        let shown = redact(url);
        let mut addrs = Vec::new();
        let mut auth = NatsAuth::Anonymous;
        for part in url.split(',').map(str::trim) {
            let part_shown = redact(part);
            if part.is_empty() {
                return Err(NatsUrlError::EmptyAddress(shown));
            }
            let addr: ServerAddr = part.parse().map_err(|e: std::io::Error| {
                NatsUrlError::Invalid(part_shown.clone(), e.to_string())
            })?;
            let scheme = addr.scheme();
            if scheme != "nats" && scheme != "tls" {
                return Err(NatsUrlError::Scheme(part_shown, scheme.to_string()));
            }
            if addr.host().is_empty() {
                return Err(NatsUrlError::NoHost(part_shown));
            }
            match (NatsAuth::in_address(&addr), &auth) {
                (NatsAuth::Anonymous, _) => {}
                (found, NatsAuth::Anonymous) => auth = found,
                (found, known) if found == *known => {}
                _ => return Err(NatsUrlError::DifferentCredentials(shown)),
            }
            let addr = without_userinfo(addr)
                .map_err(|e| NatsUrlError::Invalid(part_shown.clone(), e.to_string()))?;
            addrs.push(addr);
        }
        Ok(NatsServers { shown, addrs, auth })
    }

    /// These servers with the credentials of the options, if any; they may not give
    /// credentials the URL already has.
    pub fn with_auth(self, auth: NatsAuth) -> Result<NatsServers, NatsUrlError> {
        match (&self.auth, auth) {
            (_, NatsAuth::Anonymous) => Ok(self),
            (NatsAuth::Anonymous, auth) => Ok(NatsServers { auth, ..self }),
            _ => Err(NatsUrlError::CredentialsTwice(self.shown)),
        }
    }

    /// Connects with `options` plus the credentials.
    pub async fn connect(
        &self,
        options: ConnectOptions,
    ) -> Result<async_nats::Client, async_nats::ConnectError> {
        self.auth.apply(options).connect(self.addrs.clone()).await
    }
}

/// The URL, credentials redacted.
impl fmt::Display for NatsServers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

fn without_userinfo(addr: ServerAddr) -> std::io::Result<ServerAddr> {
    let mut url = addr.into_inner();
    // Both fail only for URLs that cannot have userinfo, which hold none then.
    let _ = url.set_username("");
    let _ = url.set_password(None);
    ServerAddr::from_url(url)
}

/// A NATS URL (one server or several, comma-separated) for a log or an error message:
/// the userinfo of every server, whatever it holds, becomes `***`. Works on the text, not
/// on a parsed URL, so that a URL too broken to parse is redacted as well: everything
/// between the scheme and the last `@` goes.
pub fn redact(url: &str) -> String {
    url.split(',')
        .map(|part| {
            let start = part.find("://").map_or(0, |i| i + 3);
            match part[start..].rfind('@') {
                Some(at) => format!("{}{REDACTED}{}", &part[..start], &part[start + at..]),
                None => part.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_urls_are_checked() {
        let hosts = |url| {
            NatsServers::parse(url).map(|s| {
                s.addrs
                    .iter()
                    .map(|a| format!("{}://{}:{}", a.scheme(), a.host(), a.port()))
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(hosts("nats://a:1").unwrap(), ["nats://a:1"]);
        assert_eq!(
            hosts("nats://a:1, tls://b,c").unwrap(),
            ["nats://a:1", "tls://b:4222", "nats://c:4222"]
        );
        for bad in [
            "http://a",
            "ws://a",
            "nats://a:70000",
            "nats://a b",
            "nats://",
            "a,",
            "",
        ] {
            assert!(NatsServers::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn redaction_removes_every_userinfo() {
        assert_eq!(redact("nats://h:4222"), "nats://h:4222");
        assert_eq!(redact("nats://u:p@h:4222"), "nats://***@h:4222");
        assert_eq!(redact("tok@h"), "***@h");
        assert_eq!(
            redact("nats://u:p@a:1, tls://tok@b,c"),
            "nats://***@a:1, tls://***@b,c"
        );
        // An unencoded @ or a space in the password: still all of it.
        assert_eq!(redact("nats://u:p@ss w@h"), "nats://***@h");
        assert_eq!(redact(""), "");
    }

    #[test]
    fn credentials_come_from_the_url_and_stay_out_of_what_is_shown() {
        let servers = NatsServers::parse("nats://bob:p%40ss@a:1,nats://b:2").unwrap();
        assert_eq!(
            servers.auth,
            NatsAuth::UserPassword {
                user: "bob".into(),
                password: Secret("p@ss".into())
            }
        );
        for addr in &servers.addrs {
            assert_eq!((addr.username(), addr.password()), (None, None));
        }
        let token = NatsServers::parse("tls://s3cret@a").unwrap();
        assert_eq!(token.auth, NatsAuth::Token(Secret("s3cret".into())));
        for shown in [
            format!("{servers} {servers:?}"),
            format!("{token} {token:?}"),
        ] {
            assert!(
                !shown.contains("p@ss") && !shown.contains("p%40ss"),
                "{shown}"
            );
            assert!(!shown.contains("s3cret"), "{shown}");
        }
    }

    #[test]
    fn credentials_are_given_once() {
        let token = NatsAuth::Token(Secret("t".into()));
        let plain = NatsServers::parse("nats://a").unwrap();
        assert_eq!(plain.with_auth(token.clone()).unwrap().auth, token);
        let error = NatsServers::parse("nats://u:secret@a")
            .unwrap()
            .with_auth(token)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("nats://***@a") && !error.contains("secret"),
            "{error}"
        );
        let error = NatsServers::parse("nats://u:secret@a,nats://v:secret@b")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("secret"), "{error}");
        let error = NatsServers::parse("nats://u:secret@a b")
            .unwrap_err()
            .to_string();
        assert!(!error.contains("secret"), "{error}");
    }
}
