//! Secrets for the binding editors, made to pass the rules of [`crate::validate`]: an MQTT
//! `password` (section 2.8: at least 24 characters, all four character classes) and an HTTP
//! `sharedSecret` (the simulator's rule, A-62). The caller brings the random source, so tests
//! and the simulator's seed can fix it and the app can use the operating system's.

use rand::seq::SliceRandom;
use rand::Rng;

/// Letters, digits and specials a person can read back without confusing `I`/`l`/`1` or `O`/`0`.
pub const SECRET_CHARS: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789-_.~!#$%*+=";
/// The four classes of [`SECRET_CHARS`] an MQTT password needs one of each of.
const CLASSES: [&[u8]; 4] = [b"ABCDEFGHJKLMNPQRSTUVWXYZ", b"abcdefghijkmnopqrstuvwxyz", b"23456789", b"-_.~!#$%*+="];
/// Length of a generated MQTT password: the rule's 24 plus one of each class.
pub const MQTT_PASSWORD_LEN: usize = 28;
/// Length of a generated HTTP shared secret (the rule allows 16 to 64).
pub const SHARED_SECRET_LEN: usize = 32;

/// `len` characters drawn from [`SECRET_CHARS`].
pub fn secret<R: Rng + ?Sized>(rng: &mut R, len: usize) -> String {
    (0..len).map(|_| char::from(SECRET_CHARS[rng.gen_range(0..SECRET_CHARS.len())])).collect()
}

/// An MQTT binding password of [`MQTT_PASSWORD_LEN`] characters: 24 drawn from
/// [`SECRET_CHARS`], one more of each class, shuffled. It always passes
/// [`validate::mqtt_password`](crate::validate::mqtt_password).
pub fn mqtt_password<R: Rng + ?Sized>(rng: &mut R) -> String {
    let mut chars: Vec<char> = secret(rng, MQTT_PASSWORD_LEN - CLASSES.len()).chars().collect();
    for class in CLASSES {
        chars.push(char::from(class[rng.gen_range(0..class.len())]));
    }
    chars.shuffle(rng);
    chars.into_iter().collect()
}

/// An HTTP binding shared secret of [`SHARED_SECRET_LEN`] characters from [`SECRET_CHARS`]. It
/// always passes [`validate::shared_secret`](crate::validate::shared_secret).
pub fn shared_secret<R: Rng + ?Sized>(rng: &mut R) -> String {
    secret(rng, SHARED_SECRET_LEN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::validate;
    use proptest::prelude::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn the_classes_are_the_alphabet_and_each_is_one_class() {
        let joined: Vec<u8> = CLASSES.concat();
        assert_eq!(joined, SECRET_CHARS);
        assert!(CLASSES[0].iter().all(u8::is_ascii_uppercase));
        assert!(CLASSES[1].iter().all(u8::is_ascii_lowercase));
        assert!(CLASSES[2].iter().all(u8::is_ascii_digit));
        assert!(CLASSES[3].iter().all(|b| b.is_ascii_punctuation()));
    }

    #[test]
    fn the_operating_systems_randomness_works_too() {
        let p = mqtt_password(&mut rand::thread_rng());
        assert_eq!(validate::mqtt_password(&p), Ok(()));
        assert_ne!(p, mqtt_password(&mut rand::thread_rng()));
    }

    proptest! {
        #[test]
        fn generated_passwords_pass_the_rule(seed in any::<u64>()) {
            let mut rng = StdRng::seed_from_u64(seed);
            let p = mqtt_password(&mut rng);
            prop_assert_eq!(p.chars().count(), MQTT_PASSWORD_LEN);
            prop_assert!(p.bytes().all(|b| SECRET_CHARS.contains(&b)), "{}", p);
            prop_assert_eq!(validate::mqtt_password(&p), Ok(()));
        }

        #[test]
        fn generated_shared_secrets_pass_the_rule(seed in any::<u64>()) {
            let s = shared_secret(&mut StdRng::seed_from_u64(seed));
            prop_assert_eq!(validate::shared_secret(&s), Ok(()));
        }
    }
}
