//! What a client learns of the service's page sizes, kept by the client (shared by its clones)
//! and used by [`crate::paging`]: a `limit` refused is not asked again, and the largest size
//! seen accepted below it is asked instead. Its own module, so that the client and the paging
//! that calls the client do not import each other.

/// What a client learnt of the service's page sizes.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PageSizes {
    /// The smallest `limit` the service refused.
    refused: Option<u32>,
    /// The largest page size seen accepted (a `limit` answered, or the length of a full page
    /// of the service's default size), below `refused`.
    accepted: Option<u32>,
}

impl PageSizes {
    /// The `limit` to ask for instead of `asked`: `asked` itself unless a size that large was
    /// refused; then the largest accepted one, or none (the service's default).
    pub(crate) fn limit_for(&self, asked: u32) -> Option<u32> {
        match self.refused {
            Some(r) if asked >= r => self.accepted.filter(|a| *a < r),
            _ => Some(asked),
        }
    }

    pub(crate) fn refuse(&mut self, limit: u32) {
        self.refused = Some(self.refused.map_or(limit, |r| r.min(limit)));
        if self.accepted.is_some_and(|a| a >= limit) {
            self.accepted = None;
        }
    }

    pub(crate) fn accept(&mut self, size: u32) {
        if size > 0 && self.refused.is_none_or(|r| size < r) {
            self.accepted = Some(self.accepted.map_or(size, |a| a.max(size)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_refused_are_not_asked_again_and_accepted_ones_are_used_instead() {
        let mut s = PageSizes::default();
        assert_eq!(s.limit_for(1000), Some(1000));
        s.accept(20);
        s.refuse(1000);
        assert_eq!(s.limit_for(1000), Some(20), "the largest size seen accepted below the refused one");
        assert_eq!(s.limit_for(5000), Some(20));
        assert_eq!(s.limit_for(999), Some(999), "a smaller size is still tried");
        s.refuse(500);
        s.accept(600);
        assert_eq!(s.accepted, Some(20), "nothing at or above a refused size counts as accepted");
        s.refuse(10);
        assert_eq!(s.limit_for(50), None, "no accepted size below: the service's default");
        assert_eq!(s.limit_for(5), Some(5));
    }
}
