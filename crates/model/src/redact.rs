//! One way to print a type that holds a secret: [`redacting_debug!`] writes its `Debug`, every
//! field in the order given, a secret field as `***` (or `Some(***)`/`None`), and unknown members
//! by their names only, so no key, password or token reaches a log line.

/// `Some(***)` or `None`: whether an optional secret is there, never what it is.
pub(crate) fn mask(s: &Option<String>) -> &'static str {
    if s.is_some() {
        "Some(***)"
    } else {
        "None"
    }
}

/// Implements `Debug` for `$ty` showing the listed fields in order; a field marked `: secret` is
/// written `***`, `: masked` (an optional secret) `Some(***)` or `None`, and `: keys` (the unknown
/// members) as the list of their names.
macro_rules! redacting_debug {
    ($ty:ident { $($field:ident $(: $how:ident)?),* $(,)? }) => {
        impl std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    $(.field(stringify!($field), &redacting_debug!(@show self.$field $(, $how)?)))*
                    .finish()
            }
        }
    };
    (@show $v:expr) => { $v };
    (@show $v:expr, secret) => { "***" };
    (@show $v:expr, masked) => { $crate::redact::mask(&$v) };
    (@show $v:expr, keys) => { $v.keys().collect::<Vec<_>>() };
}
