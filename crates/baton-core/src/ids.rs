//! Timestamps and ids: what every record and every run is stamped and named with.

use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

/// Now, as `YYYY-MM-DDTHH:MM:SS.mmmZ`: fixed width, so timestamps sort as text and parse fast.
pub fn now() -> String {
    stamp(jiff::Timestamp::now())
}

/// `ts` in the form of [`now`].
pub fn stamp(ts: jiff::Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// `20261122T130501-7f3a9c`: UTC seconds, then 24 random bits so two sessions made in the
/// same second do not collide (creation also refuses an existing directory).
pub fn new_id() -> String {
    let now = jiff::Timestamp::now();
    let stamp = now.strftime("%Y%m%dT%H%M%S").to_string();
    format!("{stamp}-{:06x}", random_u32() & 0xff_ffff)
}

fn random_u32() -> u32 {
    let mut buf = [0u8; 4];
    if std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .is_ok()
    {
        return u32::from_le_bytes(buf);
    }
    // No /dev/urandom (not Unix): hash time and pid with std's randomly keyed hasher.
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish() as u32
}
