//! Which hosts `web_fetch` may reach beyond the default: the user's
//! `[network] allow` list, and which addresses are public.
//!
//! An entry is a host (`docs.rs`), a host and port (`127.0.0.1:8080`,
//! `localhost:3000`, `[::1]:8080`) or a wildcard for subdomains
//! (`*.rust-lang.org`: `doc.rust-lang.org`, not `rust-lang.org` itself).
//! Hosts compare without case and without a trailing dot. An allowed host
//! may be fetched with the network off (by the harness), and may resolve to
//! a loopback or private address; no other host may.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An entry of `[network] allow` that is not a host, `host:port` or
/// `*.domain`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` in [network] allow is not a host name (`docs.rs`, `*.rust-lang.org`, \
     `127.0.0.1:8080`): no scheme, path or spaces"
)]
pub struct BadAllowEntry(pub String);

/// One entry: the host (lower case, no brackets, no trailing dot), whether
/// it stands for subdomains, and the one port it allows, if it names one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    host: String,
    subdomains: bool,
    port: Option<u16>,
}

/// The user's allow-list, checked once when read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList {
    entries: Vec<Entry>,
    text: Vec<String>,
}

impl AllowList {
    /// Parse the config's entries; the first bad one is the error.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<AllowList, BadAllowEntry> {
        let mut list = AllowList::default();
        for raw in entries {
            let raw = raw.as_ref();
            list.entries.push(parse_entry(raw)?);
            list.text.push(raw.to_owned());
        }
        Ok(list)
    }

    /// The entries as the user wrote them (what the guest is sent).
    pub fn entries(&self) -> &[String] {
        &self.text
    }

    /// Whether the list has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether `host` (as a URL names it: `[::1]` or `::1`) on `port` is on
    /// the list.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        let host = normalise(host);
        self.entries.iter().any(|entry| {
            let name = if entry.subdomains {
                host.strip_suffix(entry.host.as_str())
                    .is_some_and(|head| head.ends_with('.') && head.len() > 1)
            } else {
                host == entry.host
            };
            name && entry.port.is_none_or(|p| p == port)
        })
    }
}

fn normalise(host: &str) -> String {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.trim_end_matches('.').to_ascii_lowercase()
}

fn parse_entry(raw: &str) -> Result<Entry, BadAllowEntry> {
    let bad = || BadAllowEntry(raw.to_owned());
    let text = raw.trim();
    if text.is_empty()
        || text.contains("://")
        || text.contains(['/', '?', '#', '@', ' ', '\t'])
        || text.chars().any(char::is_control)
    {
        return Err(bad());
    }
    let (subdomains, text) = match text.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    // `[v6]:port`, `[v6]`, a bare v6 address (two colons or more), or
    // `host[:port]`.
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or_else(bad)?;
        match after.strip_prefix(':') {
            Some(port) => (host, Some(port)),
            None if after.is_empty() => (host, None),
            None => return Err(bad()),
        }
    } else if text.matches(':').count() > 1 {
        (text, None)
    } else {
        match text.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (text, None),
        }
    };
    let port = match port {
        Some(port) => Some(port.parse::<u16>().map_err(|_| bad())?),
        None => None,
    };
    let host = normalise(host);
    if host.is_empty() || host.contains(['*', '[', ']']) {
        return Err(bad());
    }
    Ok(Entry {
        host,
        subdomains,
        port,
    })
}

/// Whether `ip` is an address of the public internet: not loopback,
/// private (RFC 1918, unique-local), link-local (cloud metadata services
/// live there), carrier-grade NAT, unspecified, multicast, broadcast,
/// documentation or benchmarking ranges; an IPv4-mapped or -compatible
/// IPv6 address is judged as its IPv4 one.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped().or_else(|| compatible_v4(v6)) {
            Some(v4) => is_public_v4(v4),
            None => is_public_v6(v6),
        },
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_unspecified()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (b == 18 || b == 19))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_loopback()
        || ip.is_unspecified()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        || first == 0x2001 && ip.segments()[1] == 0x0db8
        || first == 0x0064 && ip.segments()[1] == 0xff9b)
}

/// The IPv4 address of a deprecated IPv4-compatible IPv6 address
/// (`::a.b.c.d`), which some stacks still route to IPv4.
fn compatible_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    (s[..6].iter().all(|&x| x == 0) && (s[6] != 0 || s[7] > 1))
        .then(|| Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_match_hosts_ports_and_subdomains() {
        let list = AllowList::parse(&[
            "docs.rs",
            "*.rust-lang.org",
            "127.0.0.1:8080",
            "[::1]:9000",
            "Example.COM.",
        ])
        .expect("valid");
        assert!(list.allows("docs.rs", 443) && list.allows("DOCS.RS.", 80));
        assert!(!list.allows("evil-docs.rs", 443) && !list.allows("docs.rs.evil", 443));
        assert!(list.allows("doc.rust-lang.org", 443));
        assert!(!list.allows("rust-lang.org", 443) && !list.allows("xrust-lang.org", 443));
        assert!(list.allows("127.0.0.1", 8080) && !list.allows("127.0.0.1", 8081));
        assert!(list.allows("[::1]", 9000) && list.allows("::1", 9000));
        assert!(!list.allows("[::1]", 80));
        assert!(list.allows("example.com", 443));
        assert_eq!(list.entries().len(), 5);
    }

    #[test]
    fn entries_that_are_not_hosts_are_refused() {
        for bad in [
            "",
            "https://docs.rs",
            "docs.rs/serde",
            "user@docs.rs",
            "docs.rs:http",
            "docs.rs:70000",
            "*",
            "*.",
            "a b",
            "[::1",
        ] {
            assert_eq!(
                AllowList::parse(&[bad]),
                Err(BadAllowEntry(bad.into())),
                "{bad}"
            );
        }
    }

    #[test]
    fn private_loopback_and_link_local_addresses_are_not_public() {
        for ip in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "::127.0.0.1",
        ] {
            let ip: IpAddr = ip.parse().expect("address");
            assert!(!is_public(ip), "{ip}");
        }
        for ip in ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111"] {
            let ip: IpAddr = ip.parse().expect("address");
            assert!(is_public(ip), "{ip}");
        }
    }
}
