//! The timer host calls of `pvm_host`: scheduling (`schedule_timer`,
//! `schedule_timer_ex`, `schedule_timer_at`, `watch`, `book_timer`,
//! `book_timer_at`), extending, cancelling and revoking, quotes, the
//! dead-letter queue (#45) and the `timer_handler` decorator.

use rustpython_vm::builtins::{PyBytes, PyStr};
use rustpython_vm::function::FuncArgs;
use rustpython_vm::{PyObjectRef, PyResult, VirtualMachine};
use timerhost_types::{RequestedTrigger, TimerRequest};

use crate::host_api::args::{
    bind, optional, optional_address, optional_handler, optional_u64, parse_timer_id, parse_u64,
};
use crate::host_api::convert::value_to_py;
use crate::host_api::exec::{current_actor, host_result, with_exec, HOST};
use crate::meter::charge::charge;
use crate::rules::costs;

/// `watch(keys, ...)`'s `keys`: a str or a list/tuple of str.
fn watch_entries(obj: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<String>> {
    let as_str = |o: &PyObjectRef| {
        o.downcast_ref::<PyStr>()
            .and_then(|s| s.to_str().map(str::to_owned))
            .ok_or_else(|| {
                vm.new_type_error("watch keys must be str (a key, or a prefix ending in '*')")
            })
    };
    if obj.downcast_ref::<PyStr>().is_some() {
        return Ok(vec![as_str(obj)?]);
    }
    let items: Vec<PyObjectRef> =
        if let Some(list) = obj.downcast_ref::<rustpython_vm::builtins::PyList>() {
            list.borrow_vec().to_vec()
        } else if let Some(tuple) = obj.downcast_ref::<rustpython_vm::builtins::PyTuple>() {
            tuple.as_slice().to_vec()
        } else {
            return Err(vm.new_type_error("watch keys must be a str or a list of str"));
        };
    // Bounded before conversion: the host refuses more than max_watch_keys.
    if items.len() > 1_024 {
        return Err(vm.new_value_error(format!(
            "watch() got {} keys; max_watch_keys is far smaller",
            items.len()
        )));
    }
    charge(costs::for_bytes(items.len() as u64), 0, vm)?;
    items.iter().map(as_str).collect()
}

/// The timer functions of `pvm_host`, by name.
pub(crate) fn timer_functions(vm: &VirtualMachine) -> Vec<(&'static str, PyObjectRef)> {
    vec![
        (
            "schedule_timer",
            vm.new_function(
                "schedule_timer",
                |height: PyObjectRef, payload: PyObjectRef, vm: &VirtualMachine| -> PyResult {
                    let request = TimerRequest {
                        trigger: RequestedTrigger::Height(parse_u64(&height, "height", vm)?),
                        payload: payload_bytes(&payload, vm)?,
                        fee_payer: None,
                        gas_limit: None,
                        expires_at: None,
                        bid: None,
                        max_fee_per_cycle: None,
                        escrow_key: None,
                        book: false,
                        handler: None,
                        retries: None,
                        retry_backoff: None,
                    };
                    schedule(request, vm)
                },
            )
            .into(),
        ),
        (
            "schedule_timer_ex",
            vm.new_function(
                "schedule_timer_ex",
                |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                    schedule_one_shot(
                        args,
                        "schedule_timer_ex",
                        "height",
                        RequestedTrigger::Height,
                        vm,
                    )
                },
            )
            .into(),
        ),
        (
            "schedule_timer_at",
            vm.new_function(
                "schedule_timer_at",
                |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                    schedule_one_shot(
                        args,
                        "schedule_timer_at",
                        "timestamp_ms",
                        RequestedTrigger::Time,
                        vm,
                    )
                },
            )
            .into(),
        ),
        (
            "watch",
            vm.new_function("watch", |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                let names = [
                    "keys",
                    "payload",
                    "actor",
                    "handler",
                    "fee_payer",
                    "gas_limit",
                    "expires_at",
                    "bid",
                    "max_fee_per_cycle",
                    "max_priority_fee_per_cycle",
                    "retries",
                    "retry_backoff",
                ];
                let [keys, payload, actor, handler, fee_payer, gas_limit, expires_at, bid, max_fee, max_priority, retries, retry_backoff] =
                    bind(args, "watch", names, 1, vm)?;
                let (bid, max_fee_per_cycle) = fee_caps(&bid, &max_fee, &max_priority, vm)?;
                let handler = optional_handler(&handler, "watch", vm)?;
                let payload = match optional(payload.as_ref(), vm) {
                    Some(p) => payload_bytes(&p, vm)?,
                    None => Vec::new(),
                };
                let request = TimerRequest {
                    trigger: RequestedTrigger::State {
                        actor: optional_address(&actor, vm)?,
                        keys: watch_entries(keys.as_ref().expect("required"), vm)?,
                        handler,
                    },
                    payload,
                    fee_payer: optional_address(&fee_payer, vm)?,
                    gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
                    expires_at: optional_u64(&expires_at, "expires_at", vm)?,
                    bid,
                    max_fee_per_cycle,
                    escrow_key: None,
                    book: false,
                    handler: None,
                    retries: optional_retries(&retries, vm)?,
                    retry_backoff: optional_u64(&retry_backoff, "retry_backoff", vm)?,
                };
                schedule(request, vm)
            })
            .into(),
        ),
        (
            "extend_timer",
            vm.new_function(
                "extend_timer",
                |timer_id: PyObjectRef,
                 new_expires_at: PyObjectRef,
                 vm: &VirtualMachine|
                 -> PyResult<()> {
                    let timer_id = parse_timer_id(&timer_id, vm)?;
                    let new_expires_at = parse_u64(&new_expires_at, "new_expires_at", vm)?;
                    let actor = current_actor();
                    let call =
                        HOST.with(|slot| slot.host.extend_timer(&actor, &timer_id, new_expires_at));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "cancel_timer",
            vm.new_function(
                "cancel_timer",
                |timer_id: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let timer_id = parse_timer_id(&timer_id, vm)?;
                    let actor = current_actor();
                    let call = HOST.with(|slot| slot.host.cancel_timer(&actor, &timer_id));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "revoke_timer_payments",
            vm.new_function(
                "revoke_timer_payments",
                |vm: &VirtualMachine| -> PyResult<()> {
                    let actor = current_actor();
                    let call = HOST.with(|slot| slot.host.revoke_timer_payments(&actor));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            "timer_quote",
            vm.new_function(
                "timer_quote",
                |args: FuncArgs, vm: &VirtualMachine| -> PyResult<PyObjectRef> {
                    let names = [
                        "height",
                        "timestamp_ms",
                        "gas_limit",
                        "bid",
                        "max_fee_per_cycle",
                        "max_priority_fee_per_cycle",
                        "retries",
                        "book",
                    ];
                    let [height, timestamp_ms, gas_limit, bid, max_fee, max_priority, retries, book] =
                        bind(args, "timer_quote", names, 0, vm)?;
                    let (bid, max_fee_per_cycle) = fee_caps(&bid, &max_fee, &max_priority, vm)?;
                    let request = timerhost_types::QuoteRequest {
                        height: optional_u64(&height, "height", vm)?,
                        timestamp_ms: optional_u64(&timestamp_ms, "timestamp_ms", vm)?,
                        gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
                        bid,
                        max_fee_per_cycle,
                        retries: optional_retries(&retries, vm)?,
                        book: match optional(book.as_ref(), vm) {
                            None => false,
                            Some(b) => b.try_to_bool(vm)?,
                        },
                    };
                    let call = HOST.with(|slot| slot.host.timer_quote(request));
                    let quote = host_result(call, vm)?;
                    // The VM's side: binding the keywords and building the
                    // quote's dict, ~1 µs (107 ns per cycle in the fairness
                    // benchmark at the host's 10 alone).
                    charge(crate::rules::costs::host::TIMER_QUOTE_VM, 0, vm)?;
                    Ok(value_to_py(&quote.to_value(), vm))
                },
            )
            .into(),
        ),
        (
            "book_timer",
            vm.new_function("book_timer", |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                book(args, "book_timer", "height", RequestedTrigger::Height, vm)
            })
            .into(),
        ),
        (
            "book_timer_at",
            vm.new_function("book_timer_at", |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                book(args, "book_timer_at", "timestamp_ms", RequestedTrigger::Time, vm)
            })
            .into(),
        ),
        (
            "dead_letters",
            vm.new_function(
                "dead_letters",
                |vm: &VirtualMachine| -> PyResult<PyObjectRef> {
                    let actor = current_actor();
                    // Priced before it is read: the queue's bytes are kept
                    // beside it (#45).
                    let size = HOST.with(|slot| slot.host.dead_letters_size(&actor));
                    let bytes = host_result(size, vm)?;
                    charge(costs::for_bytes(bytes), 0, vm)?;
                    let call = HOST.with(|slot| slot.host.dead_letters(&actor));
                    let entries = host_result(call, vm)?;
                    let list: Vec<PyObjectRef> =
                        entries.iter().map(|e| value_to_py(e, vm)).collect();
                    Ok(vm.ctx.new_list(list).into())
                },
            )
            .into(),
        ),
        (
            "retry_dead_letter",
            vm.new_function(
                "retry_dead_letter",
                |args: FuncArgs, vm: &VirtualMachine| -> PyResult {
                    let [timer_id, due] =
                        bind(args, "retry_dead_letter", ["timer_id", "due"], 1, vm)?;
                    let timer_id = parse_timer_id(timer_id.as_ref().expect("required"), vm)?;
                    let due = optional_u64(&due, "due", vm)?;
                    let actor = current_actor();
                    let nested = with_exec(|s| s.frames.len() > 1);
                    let call = HOST.with(|slot| {
                        slot.host.retry_dead_letter(&actor, nested, &timer_id, due)
                    });
                    let new_id = host_result(call, vm)?;
                    Ok(vm.ctx.new_bytes(new_id.as_bytes().to_vec()).into())
                },
            )
            .into(),
        ),
        (
            "drop_dead_letter",
            vm.new_function(
                "drop_dead_letter",
                |timer_id: PyObjectRef, vm: &VirtualMachine| -> PyResult<()> {
                    let timer_id = parse_timer_id(&timer_id, vm)?;
                    let actor = current_actor();
                    let call = HOST.with(|slot| slot.host.drop_dead_letter(&actor, &timer_id));
                    host_result(call, vm)
                },
            )
            .into(),
        ),
        (
            // `@pvm_host.timer_handler` marks a method only a timer fire may
            // invoke. The mark is read from the source at deploy
            // (`CompiledActor::timer_handlers`); at run time the decorator
            // returns the method unchanged.
            "timer_handler",
            vm.new_function("timer_handler", |method: PyObjectRef| -> PyObjectRef {
                method
            })
            .into(),
        ),
    ]
}

pub(crate) fn payload_bytes(payload: &PyObjectRef, vm: &VirtualMachine) -> PyResult<Vec<u8>> {
    payload
        .downcast_ref::<PyBytes>()
        .map(|b| b.as_bytes().to_vec())
        .ok_or_else(|| vm.new_type_error("timer payload must be bytes"))
}

/// The fee keywords of a schedule or a quote (#31): `bid=` and
/// `max_priority_fee_per_cycle=` name the same priority fee (give one), and
/// `max_fee_per_cycle=` the lane fee cap. `(priority fee, fee cap)`.
fn fee_caps(
    bid: &Option<PyObjectRef>,
    max_fee: &Option<PyObjectRef>,
    max_priority: &Option<PyObjectRef>,
    vm: &VirtualMachine,
) -> PyResult<(Option<u64>, Option<u64>)> {
    let bid = optional_u64(bid, "bid", vm)?;
    let priority = optional_u64(max_priority, "max_priority_fee_per_cycle", vm)?;
    let priority = match (bid, priority) {
        (Some(_), Some(_)) => {
            return Err(vm.new_type_error(
                "bid= and max_priority_fee_per_cycle= name the same priority fee: give one",
            ))
        }
        (a, b) => a.or(b),
    };
    Ok((priority, optional_u64(max_fee, "max_fee_per_cycle", vm)?))
}

/// `schedule_timer_ex(height, payload, fee_payer=None, gas_limit=None,
/// expires_at=None, bid=None, escrow=None, max_fee_per_cycle=None,
/// max_priority_fee_per_cycle=None)` and `schedule_timer_at(timestamp_ms, …)` with
/// the same options: `due` names the first parameter, `trigger` makes it
/// the request's trigger.
fn schedule_one_shot(
    args: FuncArgs,
    function: &str,
    due: &'static str,
    trigger: fn(u64) -> RequestedTrigger,
    vm: &VirtualMachine,
) -> PyResult {
    let names = [
        due,
        "payload",
        "fee_payer",
        "gas_limit",
        "expires_at",
        "bid",
        "escrow",
        "max_fee_per_cycle",
        "max_priority_fee_per_cycle",
        "retries",
        "retry_backoff",
    ];
    let [at, payload, fee_payer, gas_limit, expires_at, bid, escrow, max_fee, max_priority, retries, retry_backoff] =
        bind(args, function, names, 2, vm)?;
    let (bid, max_fee_per_cycle) = fee_caps(&bid, &max_fee, &max_priority, vm)?;
    let at = parse_u64(at.as_ref().expect("required"), due, vm)?;
    let request = TimerRequest {
        trigger: trigger(at),
        payload: payload_bytes(payload.as_ref().expect("required"), vm)?,
        fee_payer: optional_address(&fee_payer, vm)?,
        gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
        expires_at: optional_u64(&expires_at, "expires_at", vm)?,
        bid,
        max_fee_per_cycle,
        escrow_key: optional(escrow.as_ref(), vm)
            .map(|key| crate::host_api::storage_natives::storage_key(&key, vm))
            .transpose()?,
        book: false,
        handler: None,
        retries: optional_retries(&retries, vm)?,
        retry_backoff: optional_u64(&retry_backoff, "retry_backoff", vm)?,
    };
    schedule(request, vm)
}

/// `book_timer(height, payload, gas_limit=None, handler=None,
/// fee_payer=None, bid=None, retries=None, retry_backoff=None)` and
/// `book_timer_at(timestamp_ms, …)` (#45): a timer that holds capacity in
/// the block it is due in, its booking fee paid now.
fn book(
    args: FuncArgs,
    function: &str,
    due: &'static str,
    trigger: fn(u64) -> RequestedTrigger,
    vm: &VirtualMachine,
) -> PyResult {
    let names = [
        due,
        "payload",
        "gas_limit",
        "handler",
        "fee_payer",
        "bid",
        "retries",
        "retry_backoff",
    ];
    let [at, payload, gas_limit, handler, fee_payer, bid, retries, retry_backoff] =
        bind(args, function, names, 2, vm)?;
    let handler = optional_handler(&handler, function, vm)?;
    let request = TimerRequest {
        trigger: trigger(parse_u64(at.as_ref().expect("required"), due, vm)?),
        payload: payload_bytes(payload.as_ref().expect("required"), vm)?,
        fee_payer: optional_address(&fee_payer, vm)?,
        gas_limit: optional_u64(&gas_limit, "gas_limit", vm)?,
        expires_at: None,
        bid: optional_u64(&bid, "bid", vm)?,
        max_fee_per_cycle: None,
        escrow_key: None,
        retries: optional_retries(&retries, vm)?,
        retry_backoff: optional_u64(&retry_backoff, "retry_backoff", vm)?,
        book: true,
        handler,
    };
    schedule(request, vm)
}

/// `retries=`: a count of retries (the host bounds it by `max_retries`).
fn optional_retries(retries: &Option<PyObjectRef>, vm: &VirtualMachine) -> PyResult<Option<u32>> {
    optional_u64(retries, "retries", vm)?
        .map(|n| {
            u32::try_from(n).map_err(|_| {
                vm.new_value_error(format!("retries={n} is far more than any chain allows"))
            })
        })
        .transpose()
}

pub(crate) fn schedule(request: TimerRequest, vm: &VirtualMachine) -> PyResult {
    let actor = current_actor();
    // The outermost frame is the actor the transaction (or fire) targets.
    let nested = with_exec(|s| s.frames.len() > 1);
    let call = HOST.with(|slot| slot.host.schedule_timer(&actor, nested, request));
    let timer_id = host_result(call, vm)?;
    Ok(vm.ctx.new_bytes(timer_id.as_bytes().to_vec()).into())
}
