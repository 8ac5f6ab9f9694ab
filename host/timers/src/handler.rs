//! CIP-5 §4.2 custom handler convention: a payload that is a JSON object
//! `{"_handler": "<name>", "_payload": "<base64>"}` invokes `<name>` with the
//! decoded inner payload; any other payload invokes `handle_timer` with the
//! payload itself.

use base64::Engine as _;
use timerhost_types::timer::DEFAULT_TIMER_HANDLER;

use crate::error::TimerError;

/// What a payload resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Handler to invoke.
    pub handler: String,
    /// Bytes delivered to it.
    pub payload: Vec<u8>,
}

/// Resolves a payload to its handler and delivered bytes. A payload that
/// follows the convention but names an invalid handler is an error; one that
/// merely is not the convention (not JSON, other keys, bad base64) is
/// delivered whole to `handle_timer`.
pub fn resolve(payload: &[u8]) -> Result<Resolved, TimerError> {
    let default = || Resolved {
        handler: DEFAULT_TIMER_HANDLER.to_string(),
        payload: payload.to_vec(),
    };
    // Cheap pre-check: the convention is a JSON object.
    if payload.first() != Some(&b'{') {
        return Ok(default());
    }
    let Ok(serde_json::Value::Object(map)) = serde_json::from_slice::<serde_json::Value>(payload)
    else {
        return Ok(default());
    };
    let (Some(serde_json::Value::String(name)), Some(serde_json::Value::String(inner))) =
        (map.get("_handler"), map.get("_payload"))
    else {
        return Ok(default());
    };
    if map.len() != 2 {
        return Ok(default());
    }
    let Ok(inner) = base64::engine::general_purpose::STANDARD.decode(inner) else {
        return Ok(default());
    };
    validate_handler(name)?;
    Ok(Resolved {
        handler: name.clone(),
        payload: inner,
    })
}

/// A timer may name only a handler the VM could invoke: the one rule of
/// [`timerhost_types::check_handler_name`] (no `_` prefix, no reserved name
/// such as `deploy` or `storage`, at most 256 bytes).
pub fn validate_handler(name: &str) -> Result<(), TimerError> {
    timerhost_types::check_handler_name(name).map_err(|reason| TimerError::InvalidHandler {
        call: "schedule_timer",
        name: name.chars().take(64).collect(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_payloads_go_to_handle_timer() {
        for p in [
            &b""[..],
            b"hello",
            b"{not json",
            b"{\"_handler\": \"x\"}",
            b"{\"_handler\":\"a\",\"_payload\":\"!!\"}",
        ] {
            let r = resolve(p).unwrap();
            assert_eq!(r.handler, "handle_timer");
            assert_eq!(r.payload, p);
        }
    }

    #[test]
    fn custom_handler_convention() {
        let r = resolve(br#"{"_handler": "tick", "_payload": "aGk="}"#).unwrap();
        assert_eq!(
            r,
            Resolved {
                handler: "tick".into(),
                payload: b"hi".to_vec()
            }
        );
    }

    #[test]
    fn custom_handler_name_rules() {
        let long = format!(r#"{{"_handler": "{}", "_payload": ""}}"#, "a".repeat(257));
        assert!(matches!(
            resolve(long.as_bytes()),
            Err(TimerError::InvalidHandler { reason, .. }) if reason.contains("at most 256 bytes")
        ));
        // Names the VM refuses as handlers are refused at scheduling too.
        for bad in [
            "_private", "__init__", "1x", "a-b", "deploy", "", "storage", "address", "deployer",
        ] {
            let p = format!(r#"{{"_handler": "{bad}", "_payload": ""}}"#);
            assert!(
                matches!(
                    resolve(p.as_bytes()),
                    Err(TimerError::InvalidHandler { .. })
                ),
                "{bad}"
            );
        }
    }
}
