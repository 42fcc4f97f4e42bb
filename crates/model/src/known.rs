//! Enums of known values that keep any other value instead of failing to parse: a status the
//! service adds later must never break a client (DESIGN: "an `Unknown(String)` arm").

/// Declares `enum Name { Variant, ..., Unknown(String) }` with string (de)serialisation.
#[macro_export]
macro_rules! known_values {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant,)+
            /// A value this version does not know, kept as sent.
            Unknown(String),
        }

        impl $name {
            /// Every known value, in declaration order.
            pub const KNOWN: &'static [&'static str] = &[$($text),+];

            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $text,)+
                    Self::Unknown(s) => s,
                }
            }

            pub fn is_known(&self) -> bool {
                !matches!(self, Self::Unknown(_))
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                match s {
                    $($text => Self::$variant,)+
                    other => Self::Unknown(other.to_owned()),
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
                Ok(Self::from(s.as_ref()))
            }
        }

        #[cfg(feature = "specta")]
        impl specta::Type for $name {
            fn definition(types: &mut specta::Types) -> specta::datatype::DataType {
                <String as specta::Type>::definition(types)
            }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::known_values! {
        Colour { Red => "RED", Blue => "BLUE" }
    }

    #[test]
    fn known_values_round_trip_and_unknown_ones_are_kept() {
        let c: Colour = serde_json::from_str("\"RED\"").unwrap();
        assert_eq!(c, Colour::Red);
        let u: Colour = serde_json::from_str("\"MAUVE\"").unwrap();
        assert_eq!(u, Colour::Unknown("MAUVE".into()));
        assert_eq!(serde_json::to_string(&u).unwrap(), "\"MAUVE\"");
        assert!(!u.is_known());
        assert_eq!(Colour::KNOWN, &["RED", "BLUE"]);
    }
}
