//! `completed_phases` of a manifest, built so that a command's cost does not grow with the
//! task's history. The entries already on disk stay as their raw JSON text: they are copied
//! into the next manifest, never re-parsed or re-serialized. What the state machine asks on
//! every command — attempts of a phase, the last entry, the entries that overlap a new one —
//! is answered from that text directly; a full parse happens only for reads that show every
//! entry (metrics, summary, shelving).
//!
//! The fast paths rely on the form baton itself writes: compact objects whose first keys are
//! `{"phase":"…","task_id":"…","status":…` (serde writes fields in declaration order; phase
//! names and task ids never need escaping). Any other form read from disk (pretty-printed,
//! reordered) is parsed once and rewritten in that form.

use std::cell::{Cell, OnceCell};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::CompletedPhase;

const ENTRY: &str = "{\"phase\":";

thread_local! {
    /// Set while `to_json` serializes: `Completed` then writes a placeholder that `to_json`
    /// replaces by the entries' text, instead of re-encoding them.
    static SPLICING: Cell<bool> = const { Cell::new(false) };
}
const PLACEHOLDER: &str = "\u{1}baton:completed_phases\u{1}";

/// A manifest as compact JSON, the completed phases copied rather than re-encoded.
pub fn to_json(m: &super::Manifest) -> serde_json::Result<Vec<u8>> {
    SPLICING.set(true);
    let out = serde_json::to_vec(m);
    SPLICING.set(false);
    let mut out = out?;
    let placeholder = serde_json::to_vec(PLACEHOLDER)?;
    if let Some(at) = memchr::memmem::find(&out, &placeholder) {
        let c = &m.completed_phases;
        let mut whole = Vec::with_capacity(out.len() + c.raw.len() + 160 * c.added.len());
        whole.extend_from_slice(&out[..at]);
        c.write_array(&mut whole)?;
        whole.extend_from_slice(&out[at + placeholder.len()..]);
        out = whole;
    }
    Ok(out)
}

/// Read a manifest that `to_json` wrote without parsing its completed phases: the array is cut
/// out by its brackets (its entries hold no `[`, `]` or escapes: phase names, task ids,
/// statuses and timestamps never do), the rest parsed, the entries kept as text. Anything in
/// another form goes through the full parser.
pub fn from_json(mut bytes: Vec<u8>) -> serde_json::Result<super::Manifest> {
    const KEY: &[u8] = b"\"completed_phases\":[";
    if let Some(start) = memchr::memmem::find(&bytes, KEY) {
        let open = start + KEY.len();
        if let Some(len) = memchr::memchr(b']', &bytes[open..]) {
            let inner = &bytes[open..open + len];
            let ours = inner.is_empty()
                || (inner.starts_with(ENTRY.as_bytes())
                    && inner.ends_with(b"}")
                    && memchr::memchr2(b'\n', b'\\', inner).is_none());
            if ours && std::str::from_utf8(inner).is_ok() {
                let raw: Vec<u8> = bytes.drain(open..open + len).collect();
                let mut m: super::Manifest = serde_json::from_slice(&bytes)?;
                // Checked as UTF-8 just above.
                m.completed_phases = Completed {
                    raw: String::from_utf8(raw).unwrap_or_default(),
                    ..Completed::default()
                };
                return Ok(m);
            }
        }
    }
    serde_json::from_slice(&bytes)
}

#[derive(Debug, Clone, Default)]
pub struct Completed {
    /// Entries read from disk, in baton's compact form, joined by `,`, without brackets.
    raw: String,
    raw_parsed: OnceCell<Vec<CompletedPhase>>,
    /// Entries added since.
    added: Vec<CompletedPhase>,
}

impl Completed {
    fn raw_entries(&self) -> &[CompletedPhase] {
        self.raw_parsed.get_or_init(|| {
            if self.raw.is_empty() {
                return vec![];
            }
            // `raw` was checked entry by entry when it was read (see `Check`).
            serde_json::from_str(&format!("[{}]", self.raw)).unwrap_or_default()
        })
    }

    /// Every entry, oldest first (parses the stored entries once).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &CompletedPhase> {
        self.raw_entries().iter().chain(self.added.iter())
    }

    pub fn len(&self) -> usize {
        let stored = match self.raw_parsed.get() {
            Some(v) => v.len(),
            None => self.raw.matches(ENTRY).count(),
        };
        stored + self.added.len()
    }

    pub fn is_empty(&self) -> bool {
        self.raw.is_empty() && self.added.is_empty()
    }

    pub fn push(&mut self, c: CompletedPhase) {
        self.added.push(c);
    }

    /// How many times `phase` (with `task_id`) has completed.
    pub fn attempts(&self, phase: &str, task_id: Option<&str>) -> usize {
        let needle = match task_id {
            Some(id) => format!("{ENTRY}\"{phase}\",\"task_id\":\"{id}\",\"status\""),
            None => format!("{ENTRY}\"{phase}\",\"status\""),
        };
        let stored = memchr::memmem::find_iter(self.raw.as_bytes(), needle.as_bytes()).count();
        stored
            + self
                .added
                .iter()
                .filter(|c| c.phase == phase && c.task_id.as_deref() == task_id)
                .count()
    }

    /// Entries newest first, parsing stored ones one at a time from the end.
    pub fn newest_first(&self) -> impl Iterator<Item = CompletedPhase> + '_ {
        let added = self.added.iter().rev().cloned();
        let mut end = self.raw.len();
        let stored = std::iter::from_fn(move || {
            if end == 0 {
                return None;
            }
            let start = self.raw[..end].rfind(ENTRY)?;
            let entry = serde_json::from_str(&self.raw[start..end]).ok();
            end = start.saturating_sub(1); // skip the `,` between entries
            entry
        });
        added.chain(stored)
    }

    pub fn last(&self) -> Option<CompletedPhase> {
        self.newest_first().next()
    }
}

impl PartialEq for Completed {
    fn eq(&self, other: &Self) -> bool {
        self.iter().eq(other.iter())
    }
}
impl Eq for Completed {}

impl From<Vec<CompletedPhase>> for Completed {
    fn from(added: Vec<CompletedPhase>) -> Self {
        Completed {
            added,
            ..Completed::default()
        }
    }
}

impl Completed {
    /// The JSON array: stored entries copied, added ones encoded.
    fn write_array(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        out.push(b'[');
        out.extend_from_slice(self.raw.as_bytes());
        let mut first = self.raw.is_empty();
        for c in &self.added {
            if !first {
                out.push(b',');
            }
            first = false;
            serde_json::to_writer(&mut *out, c)?;
        }
        out.push(b']');
        Ok(())
    }
}

impl Serialize for Completed {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if SPLICING.get() {
            return s.serialize_str(PLACEHOLDER);
        }
        let mut text = Vec::with_capacity(self.raw.len() + 160 * self.added.len() + 2);
        self.write_array(&mut text)
            .map_err(serde::ser::Error::custom)?;
        let text = String::from_utf8(text).map_err(serde::ser::Error::custom)?;
        let raw = RawValue::from_string(text).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Completed {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw: Box<RawValue> = Deserialize::deserialize(d)?;
        let text = raw.get().trim();
        let inner = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .ok_or_else(|| serde::de::Error::custom("completed_phases must be an array"))?;
        let compact = inner.is_empty()
            || (inner.starts_with(ENTRY) && !inner.contains('\n') && !inner.contains("\": "));
        if compact {
            // Check every entry has the shape of a completed phase — borrowing, so nothing is
            // allocated — and fail here, naming the manifest, if one does not.
            let _: Vec<Check> = serde_json::from_str(text).map_err(serde::de::Error::custom)?;
            return Ok(Completed {
                raw: inner.to_string(),
                ..Completed::default()
            });
        }
        let all: Vec<CompletedPhase> =
            serde_json::from_str(text).map_err(serde::de::Error::custom)?;
        Ok(Completed::from(all))
    }
}

/// The shape of a `CompletedPhase`, borrowed from the text.
#[derive(Deserialize)]
#[allow(dead_code)] // read only to validate
struct Check<'a> {
    #[serde(borrow)]
    phase: std::borrow::Cow<'a, str>,
    #[serde(default, borrow)]
    task_id: Option<std::borrow::Cow<'a, str>>,
    status: super::PhaseStatus,
    #[serde(borrow)]
    started_at: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    ended_at: std::borrow::Cow<'a, str>,
    duration_ms: u64,
    attempt: u32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PhaseStatus;

    fn phase(p: &str, id: Option<&str>, n: u32) -> CompletedPhase {
        CompletedPhase {
            phase: p.into(),
            task_id: id.map(Into::into),
            status: if n.is_multiple_of(2) {
                PhaseStatus::Success
            } else {
                PhaseStatus::Failed
            },
            started_at: format!("2026-01-01T00:00:{:02}.000Z", n),
            ended_at: format!("2026-01-01T00:00:{:02}.500Z", n),
            duration_ms: 500,
            attempt: n,
        }
    }

    fn roundtrip(c: &Completed) -> Completed {
        serde_json::from_str(&serde_json::to_string(c).unwrap()).unwrap()
    }

    #[test]
    fn stored_and_added_entries_answer_alike() {
        let mut c = Completed::default();
        c.push(phase("spec", None, 1));
        c.push(phase("implementation", Some("1"), 2));
        c.push(phase("spec", None, 3));
        let mut back = roundtrip(&c);
        assert!(back.raw_parsed.get().is_none(), "reading keeps entries raw");
        assert_eq!(back.raw.matches(ENTRY).count(), 3);
        back.push(phase("implementation", Some("1"), 4));
        for (p, id, want) in [
            ("spec", None, 2),
            ("implementation", Some("1"), 2),
            ("implementation", None, 0),
            ("spec", Some("1"), 0),
        ] {
            assert_eq!(back.attempts(p, id), want, "{p} {id:?}");
        }
        assert_eq!(back.len(), 4);
        let newest: Vec<u32> = back.newest_first().map(|c| c.attempt).collect();
        assert_eq!(newest, vec![4, 3, 2, 1]);
        assert_eq!(back.last().unwrap().attempt, 4);
        assert!(
            back.raw_parsed.get().is_none(),
            "the fast paths parse nothing whole"
        );
        let again = roundtrip(&back);
        assert_eq!(roundtrip(&c), c);
        assert_eq!(
            again.iter().map(|c| c.attempt).collect::<Vec<_>>(),
            vec![1, 2, 3, 4]
        );
    }

    #[test]
    fn manifests_round_trip_through_the_fast_path() {
        use crate::model::*;
        let e = Event {
            v: 1,
            seq: 1,
            ts: "2026-01-01T00:00:00.000Z".into(),
            kind: EventKind::TaskCreated {
                name: "t".into(),
                mode: Mode::Standard,
                workflow: Workflow::Orchestrate,
            },
        };
        let mut m = crate::machine::create(&e).unwrap();
        m.failure_context = Some(FailureContext {
            reason: "x\"completed_phases\":[{\"phase\":\"]".into(),
            recommendations: vec!["]".into()],
            failed_phase: None,
            paused_at: "2026-01-01T00:00:00.000Z".into(),
        });
        for n in 0..3 {
            m.completed_phases.push(phase("spec", Some("1"), n));
        }
        let bytes = to_json(&m).unwrap();
        let standard = serde_json::to_vec(&m).unwrap();
        assert_eq!(bytes, standard, "the fast writer writes what serde writes");
        let back = from_json(bytes.clone()).unwrap();
        assert!(
            back.completed_phases.raw_parsed.get().is_none(),
            "read without parsing the history"
        );
        assert_eq!(back, m);
        assert_eq!(back.completed_phases.attempts("spec", Some("1")), 3);
        // Another form (pretty-printed) goes through the full parser.
        let pretty = serde_json::to_vec_pretty(&m).unwrap();
        assert_eq!(from_json(pretty).unwrap(), m);
    }

    #[test]
    fn other_forms_are_parsed_once() {
        let pretty =
            serde_json::to_string_pretty(&vec![phase("a", None, 1), phase("b", Some("x"), 2)])
                .unwrap();
        let c: Completed = serde_json::from_str(&pretty).unwrap();
        assert_eq!(c.attempts("b", Some("x")), 1);
        assert_eq!(c.len(), 2);
        assert!(serde_json::from_str::<Completed>("{\"phase\":1}").is_err());
        assert!(serde_json::from_str::<Completed>("[{\"phase\":\"a\"}]").is_err());
        let empty: Completed = serde_json::from_str("[]").unwrap();
        assert!(empty.is_empty() && empty.last().is_none());
        assert_eq!(serde_json::to_string(&empty).unwrap(), "[]");
    }
}
