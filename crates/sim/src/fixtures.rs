//! Files for tests and benchmarks of transfers against the simulator: pseudo-random contents and
//! their SHA-256, one definition for every crate's tests.

use std::path::Path;

use sha2::{Digest, Sha256};

/// Writes `size` pseudo-random bytes (xorshift: not compressible, not repeating) to `path` and
/// answers them. The same size gives the same bytes.
pub fn write_random_file(path: &Path, size: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::with_capacity(size + 8);
    let mut x: u64 = 0x2545_f491_4f6c_dd1d ^ size as u64;
    while bytes.len() < size {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        bytes.extend_from_slice(&x.to_le_bytes());
    }
    bytes.truncate(size);
    std::fs::write(path, &bytes)?;
    Ok(bytes)
}

/// The SHA-256 of `bytes` in lower-case hex, as the service's `checksum` field has it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_of_one_size_are_alike_and_of_another_differ() {
        let dir = tempfile::tempdir().unwrap();
        let a = write_random_file(&dir.path().join("a"), 1000).unwrap();
        let b = write_random_file(&dir.path().join("b"), 1000).unwrap();
        let c = write_random_file(&dir.path().join("c"), 1001).unwrap();
        assert_eq!(a, b);
        assert_eq!(std::fs::read(dir.path().join("a")).unwrap(), a);
        assert_ne!(a[..], c[..1000]);
        assert_eq!(sha256_hex(b""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}
