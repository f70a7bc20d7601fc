//! Skip lists: the cases a provider does not support, each with the reason.

use std::fmt;

use super::Case;

/// A rule of a [`SkipList`].
enum Matcher {
    Pattern(String),
    Predicate(Box<dyn Fn(&Case) -> bool + Send + Sync>),
}

/// Cases a provider does not support, each with the reason it is skipped.
#[derive(Default)]
pub struct SkipList {
    rules: Vec<(Matcher, String)>,
}

impl fmt::Debug for SkipList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut l = f.debug_list();
        for (m, reason) in &self.rules {
            match m {
                Matcher::Pattern(p) => l.entry(&format_args!("{p:?}: {reason}")),
                Matcher::Predicate(_) => l.entry(&format_args!("<predicate>: {reason}")),
            };
        }
        l.finish()
    }
}

/// Whether `name` matches `pattern`, where `*` matches any run of characters
/// (including `/`) and `?` any one character.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl SkipList {
    /// No skips.
    pub fn new() -> Self {
        Self::default()
    }

    /// Skips cases whose name matches `pattern` (see [`glob_match`]), e.g.
    /// `"conv_*/*/bf16/*"` or `"pointwise/gen_index/*"`.
    pub fn pattern(mut self, pattern: &str, reason: &str) -> Self {
        self.rules
            .push((Matcher::Pattern(pattern.to_owned()), reason.to_owned()));
        self
    }

    /// Skips cases for which `pred` is true.
    pub fn predicate(
        mut self,
        reason: &str,
        pred: impl Fn(&Case) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.rules
            .push((Matcher::Predicate(Box::new(pred)), reason.to_owned()));
        self
    }

    /// The reason of the first rule matching `case`, if any.
    pub fn reason_for(&self, case: &Case) -> Option<&str> {
        self.rules.iter().find_map(|(m, reason)| {
            let hit = match m {
                Matcher::Pattern(p) => glob_match(p, &case.name),
                Matcher::Predicate(f) => f(case),
            };
            hit.then_some(reason.as_str())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_patterns() {
        assert!(glob_match(
            "conv_*/*/bf16/*",
            "conv_fprop/3x3_pad1/bf16/nhwc"
        ));
        assert!(!glob_match(
            "conv_*/*/bf16/*",
            "conv_fprop/3x3_pad1/fp16/nhwc"
        ));
        assert!(glob_match("*", "anything"));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "abbc"));
        assert!(glob_match("*/nhwc", "x/y/nhwc"));
        assert!(!glob_match("*/nhwc", "x/y/nchw"));
    }
}
