//! Downlink statuses and failure reasons (sections 2.6, 2.7, 3): enums of the known values
//! that keep any other value. Bodies whose shape the reference does not show (the actuator
//! `method` variants, payloads) stay JSON.

crate::known_values! {
    /// Status of an actuator-style downlink (`/downlinks`).
    DownlinkStatus {
        Pending => "PENDING",
        Executing => "EXECUTING",
        SentToCarrier => "SENT_TO_CARRIER",
        Cancelled => "CANCELLED",
        Retry => "RETRY",
        Delivered => "DELIVERED",
        Failed => "FAILED",
    }
}

impl DownlinkStatus {
    /// No further change will happen.
    pub fn is_final(&self) -> bool {
        matches!(self, Self::Cancelled | Self::Delivered | Self::Failed)
    }
}

crate::known_values! {
    /// Status of an HTTP, LoRa, MQTT or SMS downlink.
    ConnectionDownlinkStatus {
        Pending => "PENDING",
        Executing => "EXECUTING",
        Done => "DONE",
    }
}

crate::known_values! {
    /// `lastFailureReason` of connection-specific downlinks: the union of every kind's values.
    FailureReason {
        Cancelled => "CANCELLED",
        Timeout => "TIMEOUT",
        Evicted => "EVICTED",
        FeedbackTimeout => "FEEDBACK_TIMEOUT",
        NotAcknowledgedByDevice => "NOT_ACKNOWLEDGED_BY_DEVICE",
        FailedToTransmitToDevice => "FAILED_TO_TRANSMIT_TO_DEVICE",
        FailedToEnqueueForTransmission => "FAILED_TO_ENQUEUE_FOR_TRANSMISSION",
        FailureToTransmitToDevice => "FAILURE_TO_TRANSMIT_TO_DEVICE",
        FailureToEnqueueForTransmission => "FAILURE_TO_ENQUEUE_FOR_TRANSMISSION",
    }
}

impl FailureReason {
    /// What the reason means, in words for people.
    pub fn explain(&self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled on request before it was delivered",
            Self::Timeout => "the device did not fetch it in time",
            Self::Evicted => "dropped from the device's queue to make room for newer downlinks",
            Self::FeedbackTimeout => "no feedback from the device before the feedback timeout",
            Self::NotAcknowledgedByDevice => "the device did not acknowledge it, retries used up",
            Self::FailedToTransmitToDevice | Self::FailureToTransmitToDevice => "the network could not transmit it to the device",
            Self::FailedToEnqueueForTransmission | Self::FailureToEnqueueForTransmission => {
                "the network refused to queue it for transmission"
            }
            Self::Unknown(_) => "a reason this version of the console does not know",
        }
    }
}

/// The connection-specific downlink families of section 4.3 (and the digital-matter one).
pub const CONNECTION_KINDS: &[&str] = &["http", "lora", "mqtt", "sms", "digitalmatter"];
