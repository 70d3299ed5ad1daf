//! The native produce path: one client batch appended to a partition's active segment
//! under a [`Lease`], the snapshot of Python's decisions for that partition.
//!
//! Python (the log and the partition) decides; this module only carries the decisions
//! out. A lease says: the leader epoch to stamp, the limits of the topic's configuration
//! (`max.message.bytes`, `segment.bytes`, the CreateTime window, LogAppendTime), when
//! the active segment must roll (`segment.ms` minus its jitter, its creation time), the
//! last offset before a `flush.messages` fsync is due, and the sequence state of every
//! producer the partition knows. Python revokes a lease before it changes any of these.
//!
//! [`append_leased`] either appends the batch exactly as the Python path would (Kafka's
//! `ProduceRequest.validateRecords`, `LogValidator` and `UnifiedLog.append` for a plain
//! client batch) or returns `None` before any side effect: for anything unusual (an
//! error of any kind, a roll, a flush, an unknown producer, a new producer epoch, a
//! transaction's first batch, a sequence that wraps) the Python path runs instead and
//! produces the answer, the error code and the message itself.

use std::collections::HashMap;

use crate::batch::{
    self, BatchHeader, COMPRESSION_CODEC_MASK, CONTROL_FLAG_MASK, LENGTH_OFFSET, LOG_OVERHEAD,
    MAGIC_OFFSET, RECORD_BATCH_OVERHEAD, TIMESTAMP_TYPE_MASK, TRANSACTIONAL_FLAG_MASK,
};
use crate::segment::Segment;

/// The largest offset delta the segment's index can hold (`Int.MAX`).
const MAX_RELATIVE_OFFSET: i64 = i32::MAX as i64;

/// What a partition knows of one producer: its epoch, the last sequence it appended
/// (-1 before its first batch of this epoch) and whether its transaction is open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProducerSequence {
    pub epoch: i16,
    pub last_sequence: i32,
    pub in_transaction: bool,
}

/// Python's decisions for one partition (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    pub leader_epoch: i32,
    pub max_message_bytes: i64,
    pub segment_bytes: i64,
    pub log_append_time: bool,
    pub timestamp_before_max_ms: i64,
    pub timestamp_after_max_ms: i64,
    /// `segment.ms` minus the active segment's jitter.
    pub roll_after_ms: i64,
    /// When the active segment was created (ms).
    pub segment_created_ms: i64,
    /// The last offset that may be appended before `flush.messages` asks for an fsync.
    pub max_last_offset: i64,
    pub producers: HashMap<i64, ProducerSequence>,
}

/// What a leased append did: the segment's result, the LogAppendTime stamped (-1 for
/// CreateTime) and the batch's header facts the producer state and the answer need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeasedAppend {
    pub first_offset: i64,
    pub last_offset: i64,
    pub max_timestamp: i64,
    pub offset_of_max_timestamp: i64,
    pub bytes_written: u64,
    pub log_append_time: i64,
    /// The batch's own max timestamp (the producer state's `lastTimestamp`).
    pub batch_max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub last_sequence: i32,
    pub records_count: i32,
    pub codec: i16,
}

/// The header of `data` when it is exactly one magic-2 batch that passes every check a
/// leader makes of a client batch before its producer state (`None` otherwise).
fn checked_header(lease: &Lease, data: &[u8], now_ms: i64) -> Option<BatchHeader> {
    if data.len() < RECORD_BATCH_OVERHEAD || data[MAGIC_OFFSET] != 2 {
        return None;
    }
    let length = i32::from_be_bytes(data[LENGTH_OFFSET..LENGTH_OFFSET + 4].try_into().ok()?);
    if LOG_OVERHEAD as i64 + length as i64 != data.len() as i64 {
        return None;
    }
    let h = batch::parse_header(data, 0, "buffer").ok()?;
    let size = data.len() as i64;
    let create_time = !lease.log_append_time && h.attributes & TIMESTAMP_TYPE_MASK == 0;
    if create_time {
        let earliest = now_ms.saturating_sub(lease.timestamp_before_max_ms);
        let latest = now_ms.saturating_add(lease.timestamp_after_max_ms);
        let outside = |t: i64| t < earliest || t > latest;
        if outside(h.base_timestamp) || outside(h.max_timestamp) {
            return None;
        }
    }
    let plain = h.base_offset == 0
        && size <= lease.max_message_bytes
        && size <= lease.segment_bytes
        && h.last_offset_delta >= 0
        && h.records_count > 0
        && h.last_offset_delta as i64 + 1 == h.records_count as i64
        && h.attributes & CONTROL_FLAG_MASK == 0
        && (h.producer_id < 0 || h.base_sequence >= 0);
    plain.then_some(h)
}

/// The producer's last sequence after `h`, when the batch continues a known producer's
/// sequence in its epoch and transaction state (`None`: the Python path decides).
fn next_sequence(lease: &Lease, h: &BatchHeader) -> Option<i32> {
    let known = lease.producers.get(&h.producer_id)?;
    let transactional = h.attributes & TRANSACTIONAL_FLAG_MASK != 0;
    if known.epoch != h.producer_epoch || known.in_transaction != transactional {
        return None;
    }
    // no wrap past Int.MAX on either side: those go the long way
    let expected = known.last_sequence.checked_add(1)?;
    if h.base_sequence != expected {
        return None;
    }
    h.base_sequence.checked_add(h.last_offset_delta)
}

/// Whether Kafka's `shouldRoll` asks for a new segment before this append.
fn must_roll(
    lease: &Lease,
    segment: &Segment,
    size: i64,
    last_offset: i64,
    max_ts: i64,
    now_ms: i64,
) -> bool {
    let current = segment.size() as i64;
    if current > lease.segment_bytes - size || segment.index_is_full() {
        return true;
    }
    let relative = last_offset - segment.base_offset();
    if !(0..=MAX_RELATIVE_OFFSET).contains(&relative) {
        return true;
    }
    if current == 0 {
        return false;
    }
    let first = segment.rolling_based_timestamp();
    let waited = if first >= 0 {
        max_ts - first
    } else {
        now_ms - lease.segment_created_ms
    };
    waited > lease.roll_after_ms
}

/// Append the one client batch `data` to `segment` (the partition's active segment) as
/// the lease allows, advancing the lease's producer sequence; `None`, with nothing
/// written and the lease unchanged, when the Python path must do it.
pub fn append_leased(
    segment: &mut Segment,
    lease: &mut Lease,
    data: &[u8],
    now_ms: i64,
) -> Option<LeasedAppend> {
    let h = checked_header(lease, data, now_ms)?;
    let last_sequence = if h.producer_id >= 0 {
        next_sequence(lease, &h)?
    } else {
        -1
    };
    let first_offset = segment.next_offset();
    let last_offset = first_offset.checked_add(h.last_offset_delta as i64)?;
    if last_offset > lease.max_last_offset {
        return None;
    }
    let log_append_time = if lease.log_append_time { now_ms } else { -1 };
    let roll_ts = if lease.log_append_time {
        log_append_time
    } else {
        h.max_timestamp
    };
    if must_roll(
        lease,
        segment,
        data.len() as i64,
        last_offset,
        roll_ts,
        now_ms,
    ) {
        return None;
    }
    // validates the CRC and every record before it writes anything
    let r = segment
        .append(data, lease.leader_epoch, log_append_time, true)
        .ok()?;
    if h.producer_id >= 0 {
        if let Some(known) = lease.producers.get_mut(&h.producer_id) {
            known.last_sequence = last_sequence;
        }
    }
    Some(LeasedAppend {
        first_offset: r.first_offset,
        last_offset: r.last_offset,
        max_timestamp: r.max_timestamp,
        offset_of_max_timestamp: r.offset_of_max_timestamp,
        bytes_written: r.bytes_written,
        log_append_time,
        batch_max_timestamp: h.max_timestamp,
        producer_id: h.producer_id,
        producer_epoch: h.producer_epoch,
        last_sequence,
        records_count: h.records_count,
        codec: h.attributes & COMPRESSION_CODEC_MASK,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::{build, BuildOptions, Record};
    use crate::segment::SegmentConfig;

    fn lease() -> Lease {
        Lease {
            leader_epoch: 3,
            max_message_bytes: 1 << 20,
            segment_bytes: 1 << 30,
            log_append_time: false,
            timestamp_before_max_ms: i64::MAX,
            timestamp_after_max_ms: i64::MAX,
            roll_after_ms: i64::MAX,
            segment_created_ms: 0,
            max_last_offset: i64::MAX,
            producers: HashMap::from([(
                7,
                ProducerSequence {
                    epoch: 0,
                    last_sequence: 4,
                    in_transaction: false,
                },
            )]),
        }
    }

    fn batch(producer_id: i64, base_sequence: i32) -> Vec<u8> {
        let records = vec![Record {
            offset: 0,
            timestamp: 1000,
            key: None,
            value: Some(b"v".to_vec()),
            headers: vec![],
        }];
        let options = BuildOptions {
            base_offset: Some(0),
            producer_id,
            producer_epoch: 0,
            base_sequence,
            ..BuildOptions::default()
        };
        build(&records, &options).unwrap()
    }

    #[test]
    fn appends_in_sequence_and_falls_back_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        let mut segment = Segment::open(dir.path(), 0, SegmentConfig::default()).unwrap();
        let mut lease = lease();
        // unknown producer, out of sequence: nothing written
        assert!(append_leased(&mut segment, &mut lease, &batch(8, 0), 1000).is_none());
        assert!(append_leased(&mut segment, &mut lease, &batch(7, 6), 1000).is_none());
        assert_eq!(segment.size(), 0);
        let done = append_leased(&mut segment, &mut lease, &batch(7, 5), 1000).unwrap();
        assert_eq!((done.first_offset, done.last_sequence), (0, 5));
        assert_eq!(lease.producers[&7].last_sequence, 5);
        let plain = append_leased(&mut segment, &mut lease, &batch(-1, -1), 1000).unwrap();
        assert_eq!(plain.first_offset, 1);
        // a corrupt CRC falls back with nothing written
        let mut bad = batch(7, 6);
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let size = segment.size();
        assert!(append_leased(&mut segment, &mut lease, &bad, 1000).is_none());
        assert_eq!(segment.size(), size);
        assert_eq!(lease.producers[&7].last_sequence, 5);
    }

    #[test]
    fn a_roll_or_a_flush_falls_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut segment = Segment::open(dir.path(), 0, SegmentConfig::default()).unwrap();
        let mut lease = lease();
        lease.max_last_offset = 0;
        assert!(append_leased(&mut segment, &mut lease, &batch(-1, -1), 1000).is_some());
        assert!(append_leased(&mut segment, &mut lease, &batch(-1, -1), 1000).is_none());
        lease.max_last_offset = i64::MAX;
        // the next batch would cross segment.bytes: the Python path rolls
        let one = batch(-1, -1);
        lease.segment_bytes = segment.size() as i64 + one.len() as i64 - 1;
        assert!(append_leased(&mut segment, &mut lease, &one, 1000).is_none());
        lease.segment_bytes += 1;
        assert!(append_leased(&mut segment, &mut lease, &one, 1000).is_some());
        // record time past segment.ms since the first batch: roll
        lease.segment_bytes = 1 << 30;
        lease.roll_after_ms = -1;
        assert!(append_leased(&mut segment, &mut lease, &one, 1000).is_none());
    }
}
