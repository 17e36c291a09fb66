//! The Prometheus remote-write 1.0 wire format (with its native-histogram extension):
//! protobuf `WriteRequest` messages,
//! snappy block-compressed, POSTed with the headers in [`HEADERS`].
//!
//! Only the fields a sender of plain float samples needs are declared; protobuf skips the
//! rest, so the field numbers below are all that must match Prometheus' `types.proto`.

use prost::Message;

/// Headers the remote-write 1.0 protocol requires on every request.
pub const HEADERS: [(&str, &str); 3] = [
    ("Content-Encoding", "snappy"),
    ("Content-Type", "application/x-protobuf"),
    ("X-Prometheus-Remote-Write-Version", "0.1.0"),
];

/// The NaN bit pattern Prometheus reads as "this series ended" (a stale marker).
pub const STALE_NAN: u64 = 0x7ff0_0000_0000_0002;

/// One remote-write request: a batch of series.
#[derive(Clone, PartialEq, Message)]
pub struct WriteRequest {
    /// The series of this push.
    #[prost(message, repeated, tag = "1")]
    pub timeseries: Vec<TimeSeries>,
}

/// One series: its labels (sorted by name, `__name__` included) and its samples.
#[derive(Clone, PartialEq, Message)]
pub struct TimeSeries {
    /// Labels sorted by name.
    #[prost(message, repeated, tag = "1")]
    pub labels: Vec<Label>,
    /// Samples in time order.
    #[prost(message, repeated, tag = "2")]
    pub samples: Vec<Sample>,
    /// Native histogram samples in time order.
    #[prost(message, repeated, tag = "4")]
    pub histograms: Vec<Histogram>,
}

/// A native (sparse, exponential-bucket) histogram sample with integer counts.
///
/// The protocol's `oneof count` / `oneof zero_count` are declared as their integer
/// members only, as optional fields: on the wire that is the same thing.
#[derive(Clone, PartialEq, Message)]
pub struct Histogram {
    /// Number of observations.
    #[prost(uint64, optional, tag = "1")]
    pub count_int: Option<u64>,
    /// Sum of observations.
    #[prost(double, tag = "3")]
    pub sum: f64,
    /// Resolution: bucket boundaries are powers of `2^(2^-schema)`.
    #[prost(sint32, tag = "4")]
    pub schema: i32,
    /// Observations with an absolute value up to this land in the zero bucket.
    #[prost(double, tag = "5")]
    pub zero_threshold: f64,
    /// Observations in the zero bucket.
    #[prost(uint64, optional, tag = "6")]
    pub zero_count_int: Option<u64>,
    /// Runs of populated negative buckets.
    #[prost(message, repeated, tag = "8")]
    pub negative_spans: Vec<BucketSpan>,
    /// Negative bucket counts, each as the difference to the previous bucket's.
    #[prost(sint64, repeated, tag = "9")]
    pub negative_deltas: Vec<i64>,
    /// Runs of populated positive buckets.
    #[prost(message, repeated, tag = "11")]
    pub positive_spans: Vec<BucketSpan>,
    /// Positive bucket counts, each as the difference to the previous bucket's.
    #[prost(sint64, repeated, tag = "12")]
    pub positive_deltas: Vec<i64>,
    /// Milliseconds since the Unix epoch.
    #[prost(int64, tag = "15")]
    pub timestamp: i64,
}

/// A run of consecutive buckets: `offset` buckets after the previous run's end (or the
/// absolute index of the first bucket for the first run), `length` buckets long.
#[derive(Clone, PartialEq, Eq, Message)]
pub struct BucketSpan {
    /// Gap before this run.
    #[prost(sint32, tag = "1")]
    pub offset: i32,
    /// Buckets in this run.
    #[prost(uint32, tag = "2")]
    pub length: u32,
}

/// One label pair.
#[derive(Clone, PartialEq, Eq, Hash, Message)]
pub struct Label {
    /// Label name.
    #[prost(string, tag = "1")]
    pub name: String,
    /// Label value.
    #[prost(string, tag = "2")]
    pub value: String,
}

/// One float sample.
#[derive(Clone, PartialEq, Message)]
pub struct Sample {
    /// The value.
    #[prost(double, tag = "1")]
    pub value: f64,
    /// Milliseconds since the Unix epoch.
    #[prost(int64, tag = "2")]
    pub timestamp: i64,
}

/// Serialises `req` and compresses it with snappy's block format (not the framed one).
pub fn encode(req: &WriteRequest) -> Vec<u8> {
    let raw = req.encode_to_vec();
    // Compressing an in-memory buffer fails only past snappy's ~4 GiB input limit, far
    // beyond any push (a push is bounded by the number of series).
    snap::raw::Encoder::new()
        .compress_vec(&raw)
        .expect("snappy input under 4 GiB")
}

/// The inverse of [`encode`], for tests and fakes of a receiver.
pub fn decode(body: &[u8]) -> Result<WriteRequest, String> {
    let raw = snap::raw::Decoder::new()
        .decompress_vec(body)
        .map_err(|e| format!("snappy: {e}"))?;
    WriteRequest::decode(raw.as_slice()).map_err(|e| format!("protobuf: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request() -> WriteRequest {
        WriteRequest {
            timeseries: vec![TimeSeries {
                labels: vec![
                    Label {
                        name: "__name__".into(),
                        value: "k6_http_reqs_total".into(),
                    },
                    Label {
                        name: "status".into(),
                        value: "200".into(),
                    },
                ],
                samples: vec![Sample {
                    value: 42.0,
                    timestamp: 1_796_003_284_251,
                }],
                histograms: vec![],
            }],
        }
    }

    #[test]
    fn encodes_protobuf_field_numbers() {
        // Hand-assembled bytes of the same message: they pin the tags and wire types that
        // Prometheus' types.proto defines, independently of prost.
        let ts = &request().timeseries[0];
        let bytes = ts.samples[0].encode_to_vec();
        let mut expected = vec![0x09]; // field 1, 64-bit
        expected.extend_from_slice(&42.0f64.to_le_bytes());
        expected.push(0x10); // field 2, varint
        let mut ms = 1_796_003_284_251u64;
        while ms >= 0x80 {
            expected.push((ms as u8) | 0x80);
            ms >>= 7;
        }
        expected.push(ms as u8);
        assert_eq!(bytes, expected);
        let label = ts.labels[1].encode_to_vec();
        assert_eq!(label, b"\x0a\x06status\x12\x03200");
        let series = ts.encode_to_vec();
        assert_eq!(series[0], 0x0a, "labels are field 1, length-delimited");
        let req = request().encode_to_vec();
        assert_eq!(req[0], 0x0a, "timeseries are field 1, length-delimited");
        assert_eq!(req[1] as usize, series.len());
    }

    #[test]
    fn round_trips_through_snappy_and_protobuf() {
        let req = request();
        let body = encode(&req);
        // A snappy block starts with the uncompressed length as a varint.
        let raw_len = req.encoded_len();
        assert_eq!(
            snap::raw::decompress_len(&body).unwrap(),
            raw_len,
            "block format, not framed"
        );
        assert_eq!(decode(&body).unwrap(), req);
        assert!(decode(b"not snappy at all").is_err());
    }

    #[test]
    fn stale_marker_is_a_nan_prometheus_recognises() {
        let v = f64::from_bits(STALE_NAN);
        assert!(v.is_nan());
        let s = Sample {
            value: v,
            timestamp: 1,
        };
        let back = Sample::decode(s.encode_to_vec().as_slice()).unwrap();
        assert_eq!(back.value.to_bits(), STALE_NAN, "payload bits survive");
    }
}
