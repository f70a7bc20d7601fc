//! hipDNN's enumerations and constants of the C API, and the headers that declare them.
//!
//! hipDNN's public header splits its enumerations into sub-headers (`HipdnnDataType.h`,
//! `HipdnnBackendAttributeName.h`, …) included by `hipdnn_backend.h`; C and C++ programs
//! written against hipDNN name those types and values and sometimes those files. This
//! module is the single source of both: its `tables` list every header, every enumeration
//! (hipDNN's names and numbers) and every value, and the `c_headers!` macro that reads
//! the list defines
//!
//! * the Rust items, re-exported by [`capi`](crate::capi): each enumeration type as `i32`
//!   (a C enumeration with these values is an `int`) and each value as a constant of it,
//!   which the C API matches on;
//! * [`HEADERS`], from which [`render`] writes the sub-headers into `backend/include/`
//!   (`scripts/gen-backend-header.sh` runs the `gen_headers` example, and `--check` fails
//!   on a difference, as it does for `hipdnn_backend.h`, which cbindgen writes and which
//!   includes them).
//!
//! The headers are valid C99 and C++17 (hipDNN's own use C++ `constexpr` in two of them;
//! ours use macros there). Where hipDNN renamed a value between versions, both spellings
//! are declared with the same number, so code written against either compiles.
//!
//! cbindgen does not expand macros, so it never sees these items: `hipdnn_backend.h`
//! names the types in its prototypes and gets them from the sub-headers.

/// One generated header file.
#[derive(Debug)]
pub struct CHeader {
    /// File name, in `backend/include/`.
    pub file: &'static str,
    /// Include-guard macro.
    pub guard: &'static str,
    /// What the file holds (doc lines, each starting with a space as rustdoc keeps them).
    pub doc: &'static [&'static str],
    /// C text before the enumerations.
    pub prelude: &'static str,
    /// The enumerations, in order.
    pub enums: &'static [CEnum],
    /// C text after the enumerations.
    pub epilogue: &'static str,
}

/// One C enumeration: `typedef enum { … } name;`.
#[derive(Debug)]
pub struct CEnum {
    /// The typedef name, e.g. `hipdnnDataType_t`.
    pub name: &'static str,
    /// Doc lines.
    pub doc: &'static [&'static str],
    /// The values, in order.
    pub values: &'static [CValue],
}

/// One enumerator.
#[derive(Debug)]
pub struct CValue {
    /// Its name, e.g. `HIPDNN_DATA_FLOAT`.
    pub name: &'static str,
    /// Its number.
    pub value: i64,
    /// Doc lines (none for most).
    pub doc: &'static [&'static str],
}

/// Defines the Rust items and [`HEADERS`] from the header list (see the module docs).
///
/// An enumeration marked `new` gets a Rust type (`i32`) and constants; one marked
/// `existing` is only written to its header: its Rust items live elsewhere (the status
/// codes in [`crate::status`]) and the values name them, so the numbers stay in one place.
macro_rules! c_headers {
    ($(
        $(#[doc = $hdoc:literal])*
        header $file:literal guard $guard:literal
        $(prelude $pre:literal)?
        $(epilogue $post:literal)?
        {
            $(
                $(#[doc = $edoc:literal])*
                $kind:ident $ty:ident {
                    $(
                        $(#[doc = $vdoc:literal])*
                        $name:ident = $value:expr
                    ),* $(,)?
                }
            )*
        }
    )*) => {
        $($(
            c_headers!(@rust $kind [$($edoc)*] $ty { $([$($vdoc)*] $name = $value,)* });
        )*)*

        /// Every generated sub-header of `hipdnn_backend.h`, in file-name order.
        pub static HEADERS: &[$crate::capi::enums::CHeader] = &[$(
            $crate::capi::enums::CHeader {
                file: $file,
                guard: $guard,
                doc: &[$($hdoc),*],
                prelude: concat!("" $(, $pre)?),
                enums: &[$(
                    $crate::capi::enums::CEnum {
                        name: stringify!($ty),
                        doc: &[$($edoc),*],
                        values: &[$(
                            $crate::capi::enums::CValue {
                                name: stringify!($name),
                                value: ($value) as i64,
                                doc: &[$($vdoc),*],
                            },
                        )*],
                    },
                )*],
                epilogue: concat!("" $(, $post)?),
            },
        )*];
    };
    (@rust new [$($edoc:literal)*] $ty:ident { $([$($vdoc:literal)*] $name:ident = $value:expr,)* }) => {
        $(#[doc = $edoc])*
        #[doc = ""]
        #[doc = concat!("A C enumeration (`int`): `", stringify!($ty), "`.")]
        pub type $ty = i32;
        $(
            $(#[doc = $vdoc])*
            #[doc = concat!("`", stringify!($name), "`, hipDNN's value of `", stringify!($ty), "`.")]
            pub const $name: $ty = $value;
        )*
    };
    (@rust existing [$($edoc:literal)*] $ty:ident { $([$($vdoc:literal)*] $name:ident = $value:expr,)* }) => {};
}

pub(super) mod tables;

pub use tables::HEADERS;

/// Writes a doc block as a C comment indented by `indent`, or nothing when empty. A
/// first line starting with `§ ` is a section heading: a comment of its own after a blank
/// line.
fn comment(out: &mut String, indent: &str, doc: &[&str]) {
    let mut lines: Vec<&str> = doc
        .iter()
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    if let Some(heading) = lines.first().and_then(|l| l.strip_prefix("§ ")) {
        if !out.ends_with("{\n") {
            out.push('\n');
        }
        out.push_str(&format!("{indent}/* {heading} */\n"));
        lines.remove(0);
    }
    match lines.as_slice() {
        [] => {}
        [one] => out.push_str(&format!("{indent}/* {one} */\n")),
        [first, rest @ ..] => {
            out.push_str(&format!("{indent}/* {first}\n"));
            for line in rest {
                if line.is_empty() {
                    out.push_str(&format!("{indent}\n"));
                } else {
                    out.push_str(&format!("{indent}   {line}\n"));
                }
            }
            // Reopen the last line to close the comment on it.
            out.pop();
            out.push_str(" */\n");
        }
    }
}

/// The C text of `header`.
pub fn render(header: &CHeader) -> String {
    let mut out = String::new();
    out.push_str(
        "/* Generated from backend/src/capi/enums/tables.rs; do not edit. Regenerate with \
         scripts/gen-backend-header.sh. */\n",
    );
    comment(&mut out, "", header.doc);
    out.push_str(&format!("#ifndef {0}\n#define {0}\n", header.guard));
    if !header.prelude.is_empty() {
        out.push('\n');
        out.push_str(header.prelude.trim_matches('\n'));
        out.push('\n');
    }
    for e in header.enums {
        out.push('\n');
        comment(&mut out, "", e.doc);
        out.push_str("typedef enum\n{\n");
        for (i, v) in e.values.iter().enumerate() {
            comment(&mut out, "    ", v.doc);
            let comma = if i + 1 < e.values.len() { "," } else { "" };
            out.push_str(&format!("    {} = {}{comma}\n", v.name, v.value));
        }
        out.push_str(&format!("}} {};\n", e.name));
    }
    if !header.epilogue.is_empty() {
        out.push('\n');
        out.push_str(header.epilogue.trim_matches('\n'));
        out.push('\n');
    }
    out.push_str(&format!("\n#endif /* {} */\n", header.guard));
    out
}

/// Every sub-header as `(file name, text)`.
pub fn header_files() -> Vec<(&'static str, String)> {
    HEADERS.iter().map(|h| (h.file, render(h))).collect()
}

#[cfg(test)]
mod tests {
    use super::tables::*;
    use super::*;

    #[test]
    fn names_are_unique_and_values_fit_an_int() {
        let mut names = std::collections::HashSet::new();
        let mut files = std::collections::HashSet::new();
        for h in HEADERS {
            assert!(files.insert(h.file), "{} twice", h.file);
            for e in h.enums {
                assert!(names.insert(e.name), "{} twice", e.name);
                for v in e.values {
                    assert!(names.insert(v.name), "{} twice", v.name);
                    assert!(i32::try_from(v.value).is_ok(), "{} = {}", v.name, v.value);
                }
            }
        }
    }

    /// The committed sub-headers are what the tables generate (as
    /// `scripts/gen-backend-header.sh --check` checks too).
    #[test]
    fn committed_sub_headers_are_up_to_date() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
        for (file, text) in header_files() {
            let committed = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
            assert!(
                committed == text,
                "include/{file} is stale: run scripts/gen-backend-header.sh"
            );
        }
    }

    #[test]
    fn values_render_in_order_and_docs_as_comments() {
        let h = HEADERS
            .iter()
            .find(|h| h.file == "HipdnnDataType.h")
            .unwrap();
        let text = render(h);
        assert!(text.contains("typedef enum\n{\n"), "{text}");
        assert!(text.contains("    HIPDNN_DATA_FLOAT = 0,\n"), "{text}");
        assert!(text.contains("} hipdnnDataType_t;\n"), "{text}");
        assert!(text.starts_with("/* Generated"), "{text}");
        assert!(
            text.ends_with("#endif /* HIPDNN_DATA_TYPE_H */\n"),
            "{text}"
        );
        assert_eq!(HIPDNN_DATA_FLOAT, 0);
        assert_eq!(HIPDNN_POINTWISE_ADD, HIPDNN_POINTWISE_MODE_ADD);
    }
}
