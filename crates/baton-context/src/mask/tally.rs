//! How many tokens an output holds, at the cost its use deserves.
//!
//! Masking runs on every tool call of every agent (a hook is a whole process), and an exact
//! count is BPE over every piece of the output, about 30 ms of CPU per MB: as much as reading
//! and summarising it. So an output is first *estimated* in one cheap pass
//! ([`crate::tokens::estimate`]), and counted exactly only when the estimate cannot tell
//! which side of the threshold it is on. Every figure that comes from the estimate says so
//! (`tokens_estimated`).

use crate::tokens::{Encoding, estimate};

/// The ratio estimate / exact count that real outputs stay within: test logs, build output,
/// JSON, code, prose, CJK and emoji; checked against o200k_base on every text of the corpus
/// (`the_estimate_stays_in_its_band_on_the_corpus`). Outside this band around the
/// threshold the estimate alone decides.
pub(crate) const BAND: (f64, f64) = (0.7, 1.4);

/// Tokens of an output and whether the figure is exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub tokens: u64,
    pub exact: bool,
}

/// The tokens of an output of `bytes` bytes whose first `sample.len()` bytes are `sample`
/// (all of it when they are as many), as precise as deciding "more than `threshold`?" needs:
/// the estimate when it decides, else an exact count of the sample, scaled to the whole.
pub fn tally(sample: &[u8], bytes: u64, threshold: usize) -> Tally {
    if sample.is_empty() {
        return Tally {
            tokens: bytes / 4,
            exact: false,
        };
    }
    let text = String::from_utf8_lossy(sample);
    let scale = |n: usize| (n as u128 * bytes as u128 / sample.len() as u128) as u64;
    let guess = scale(estimate(&text));
    let (low, high) = BAND;
    let threshold = threshold as f64;
    // The exact count lies in [guess / high, guess / low].
    if guess as f64 / high > threshold || guess as f64 / low <= threshold {
        return Tally {
            tokens: guess,
            exact: false,
        };
    }
    Tally {
        tokens: scale(Encoding::O200kBase.count(&text)),
        exact: sample.len() as u64 >= bytes,
    }
}

/// Estimated tokens of a text shown to an agent (a masked output's summary): a figure for
/// the mask log, which records it as an estimate (`masked_tokens`).
pub fn shown(text: &str) -> u64 {
    estimate(text) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_decides_far_from_the_threshold_and_the_count_near_it() {
        // 40 KB of a test log: ~10,000 tokens, far over 2,000.
        let log: String = (0..1000)
            .map(|i| format!("test module::case_{i} ... ok\n"))
            .collect();
        let far = tally(log.as_bytes(), log.len() as u64, 2000);
        assert!(!far.exact, "decided by the estimate: {far:?}");
        let exact = Encoding::O200kBase.count(&log) as f64;
        assert!(
            (far.tokens as f64 / exact - 1.0).abs() < 0.15,
            "{far:?} vs {exact}"
        );
        // Far under: no count either.
        let small = &log[..2000];
        assert!(!tally(small.as_bytes(), 2000, 2000).exact);
        // Near it: counted.
        let near = tally(log.as_bytes(), log.len() as u64, exact as usize);
        assert_eq!(
            near,
            Tally {
                tokens: exact as u64,
                exact: true
            }
        );
        // A sample of a longer output: counted, then scaled, and said to be scaled.
        let scaled = tally(log.as_bytes(), 2 * log.len() as u64, 2 * exact as usize);
        assert_eq!(scaled.tokens, 2 * exact as u64);
        assert!(!scaled.exact);
        // Nothing to read: bytes/4.
        assert_eq!(
            tally(b"", 400, 10),
            Tally {
                tokens: 100,
                exact: false
            }
        );
    }

    /// Every text of the corpus (test-runner logs, the large ones included, and the token
    /// corpus's code, JSON, logs, CJK and emoji): estimate / exact within [`BAND`], so no
    /// output the estimate decides is on the wrong side of the threshold.
    #[test]
    fn the_estimate_stays_in_its_band_on_the_corpus() {
        let Some(root) =
            std::env::var_os("BATON_CORPUS").filter(|d| std::path::Path::new(d).is_dir())
        else {
            eprintln!(
                "skipped: the_estimate_stays_in_its_band_on_the_corpus: BATON_CORPUS not set (the shared test corpus)"
            );
            return;
        };
        let root = std::path::PathBuf::from(root);
        let mut files = Vec::new();
        for dir in ["test-outputs", "test-outputs/large", "tokens/files"] {
            for e in std::fs::read_dir(root.join(dir))
                .expect("a corpus folder")
                .flatten()
            {
                let p = e.path();
                if p.is_file()
                    && p.extension()
                        .is_none_or(|x| x != "json" || dir == "tokens/files")
                {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 40, "the corpus's texts: {}", files.len());
        let (mut lo, mut hi) = (f64::MAX, 0f64);
        let mut report = Vec::new();
        for p in &files {
            let text = String::from_utf8_lossy(&std::fs::read(p).expect("readable")).into_owned();
            let exact = Encoding::O200kBase.count(&text);
            if exact < 50 {
                continue;
            }
            let r = estimate(&text) as f64 / exact as f64;
            lo = lo.min(r);
            hi = hi.max(r);
            report.push(format!("{r:.3} {}", p.display()));
        }
        report.sort();
        eprintln!("{}", report.join("\n"));
        assert!(
            lo >= BAND.0 && hi <= BAND.1,
            "estimate / exact spans {lo:.3}..{hi:.3}, outside {BAND:?}:\n{}",
            report.join("\n")
        );
    }
}
