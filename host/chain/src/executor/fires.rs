//! Deferred transactions: admitted timer fires and end-of-block hooks'
//! calls, each run as its own execution after the walk that admitted it,
//! pre-paid, settled against its limits, and — for a fire funded by an
//! escrow (#19) — settled against that escrow too.

use timerhost_timers::{escrow, events as timer_events, Fire};
use timerhost_types::{
    keccak256_concat as keccak_concat, ErrorKind, ExecError, Hash, Invocation, Receipt,
    ReceiptStatus, TxSource, Value,
};

use super::{BlockExecutor, Concluded};
use crate::accounts;
use crate::error::{ChainError, Result};
use crate::fees::{FeeQuote, FireLanePrice};
use crate::runtime::{DeferredTx, ExecContext, ExecOutcome, TxEnv};

impl BlockExecutor<'_> {
    /// Executes admitted timer fires in order, each with its `TimerFired`
    /// (boxed as the walk built them: `timerhost_timers::DeliveryPlan`).
    #[allow(clippy::vec_box)]
    pub(super) fn execute_fires(&mut self, fires: Vec<Box<Fire>>) -> Result<()> {
        // One allocation for the block's fires, not a doubling series of
        // copies of tens of thousands of receipts.
        self.receipts.reserve(fires.len());
        self.fire_priority_fees.reserve(fires.len());
        for fire in fires {
            let fire = *fire;
            let delivery = timerhost_types::Delivery {
                deliver_seq: fire.deliver_seq,
                fire_seq: fire.info.fire_seq,
                deliver_id: timerhost_types::Delivery::id(
                    self.env.height,
                    &self.env.parent_state_root,
                    &fire.timer.timer_id,
                    fire.info.fire_seq,
                ),
            };
            let tx = DeferredTx {
                origin_tx_hash: Hash::ZERO,
                sender: fire.timer.actor_address,
                fee_payer: fire.timer.fee_payer,
                actor: fire.timer.actor_address,
                handler: fire.handler,
                args: vec![Value::Bytes(fire.payload)],
                cycles_limit: fire.cycles_limit,
                base_cycles: fire.base_cycles,
                cells_limit: fire.cells_limit,
                invocation: Invocation::TimerFire(fire.info),
                cycle_basefee: fire.cycle_basefee,
                cell_basefee: fire.cell_basefee,
                lane: FireLanePrice {
                    fee_cap: u128::from(fire.fee_cap),
                    lane_basefee: u128::from(fire.lane_basefee),
                    priority: u128::from(fire.priority_fee),
                    reservation_percent: self.timer_config.lane_reservation_percent,
                },
                prepaid: fire.max_cost,
                tag: fire.timer.timer_id.0.to_vec(),
                delivery: Some(delivery),
                escrow_key: fire.timer.escrow_key.clone(),
            };
            let mut receipt = self.execute_deferred(&tx)?;
            self.fire_priority_fees.push(fire.priority_fee);
            self.timer_budgets
                .settle_fire_cells(fire.cells_limit, receipt.cells_used);
            let outcome = timer_events::FireOutcome {
                error: receipt.error.as_ref(),
                cycles_used: receipt.cycles_used,
                cells_used: receipt.cells_used,
                cost: receipt.fee_paid,
                refund: fire.max_cost - receipt.fee_paid,
                tip: receipt.tip,
                lane_basefee: fire.lane_basefee,
                priority_fee: fire.priority_fee,
                priority_clamped: fire.priority_clamped,
                weight: fire.weight,
                delivery,
            };
            let fired = timer_events::timer_fired(&fire.timer, &outcome);
            receipt.events.reserve_exact(1);
            receipt.events.push(fired);
            // #45: a failed fire of a timer with a retry policy is armed
            // again or dead-lettered, outside the fire's reverted writes.
            if let Some(error) = &receipt.error {
                let after = timerhost_timers::retries::after_failed_fire(
                    &mut self.overlay,
                    &self.timer_config,
                    &fire.timer,
                    error,
                    self.env.height,
                    self.env.timestamp_ms,
                )?;
                receipt.events.extend(after);
            }
            self.receipts.push(receipt);
        }
        Ok(())
    }

    pub(super) fn execute_deferred(&mut self, tx: &DeferredTx) -> Result<Receipt> {
        let index = self.deferred_count;
        self.deferred_count += 1;
        let mut tx_hash = keccak_concat(&[
            b"timerhost/deferred",
            &self.env.height.to_be_bytes(),
            &index.to_be_bytes(),
            &tx.tag,
        ]);
        if self.located_fire_hashes {
            // #46: the hash names where its receipt will be (both callers
            // push it next), so history needs no index entry for it.
            let place =
                u32::try_from(self.receipts.len()).expect("a block holds fewer than 2^32 receipts");
            tx_hash = timerhost_types::located::located_tx_hash(tx_hash, self.env.height, place);
        }
        // The walk admitted this fire after the same quote fit
        // (`delivery::max_cost`, checked arithmetic) and built `prepaid`
        // from it. If the two disagree — a config in force that one side
        // cannot price (#50: a cycles cap that wrapped) — the fire fails and
        // its pre-charge comes back; the block goes on.
        let quote = match FeeQuote::for_fire(
            tx.cycle_basefee,
            tx.cell_basefee,
            tx.lane,
            tx.cycles_limit,
            tx.base_cycles,
            tx.cells_limit,
        ) {
            Ok(quote) if quote.prepay == tx.prepaid => quote,
            Ok(quote) => {
                let why = format!(
                    "its pre-charge {} does not match its limits ({})",
                    tx.prepaid, quote.prepay
                );
                return self.unpriced_fire(tx, tx_hash, &why);
            }
            Err(e) => return self.unpriced_fire(tx, tx_hash, &e.to_string()),
        };
        // A hook's arguments are bytes delivered to its handler; a timer's
        // payload was paid for, in cells, when it was scheduled.
        let payload_cells: u64 = match &tx.invocation {
            Invocation::Transaction => tx.args.iter().map(|a| a.to_bytes().len() as u64).sum(),
            Invocation::TimerFire(_) => 0,
        };
        let env = TxEnv {
            block: self.env.clone(),
            sender: tx.sender,
            tx_hash,
            timer_config: self.timer_config.clone(),
        };
        let checkpoint = self.overlay.checkpoint();
        let mut escrow_release = None;
        let outcome = if payload_cells > tx.cells_limit {
            ExecOutcome {
                result: Err(ExecError::new(
                    ErrorKind::OutOfCells,
                    "the payload alone exceeds the cells limit",
                )),
                cycles_used: 0,
                cells_used: tx.cells_limit,
                events: Vec::new(),
            }
        } else if !accounts::load(&self.overlay, &tx.actor)?.is_actor {
            ExecOutcome::failed(ExecError::new(
                ErrorKind::NotFound,
                format!("no actor at {}", tx.actor),
            ))
        } else {
            let mut ctx = ExecContext {
                state: &mut self.overlay,
                env,
                cycles_limit: tx.cycles_limit,
                cells_limit: tx.cells_limit - payload_cells,
                invocation: tx.invocation.clone(),
                value: 0,
                escrow_release: None,
            };
            let mut o = self
                .runtime
                .call(&mut ctx, tx.actor, &tx.handler, &tx.args)?;
            escrow_release = ctx.escrow_release;
            o.cells_used += payload_cells;
            o
        };
        // #28: a release the actor cannot pay (its escrow int above its
        // balance) fails this fire — its writes reverted, its fee charged as
        // for any failure — and never the block. Checked while the
        // handler's writes can still be discarded.
        let release = match (&tx.escrow_key, escrow_release) {
            (Some(key), Some(to)) if outcome.result.is_ok() => Some((key, to)),
            _ => None,
        };
        let mut result = outcome.result;
        if let Some((key, _)) = release {
            if let Some(why) = escrow::release_shortfall(&self.overlay, &tx.actor, key)? {
                result = Err(ExecError::new(ErrorKind::InsufficientFunds, why));
            }
        }
        let Concluded {
            status,
            error,
            events,
            return_value,
        } = self.conclude(checkpoint, result, outcome.events);
        let cycles_used = tx.base_cycles + outcome.cycles_used.min(tx.cycles_limit);
        let cells_used = outcome.cells_used.min(tx.cells_limit);
        let settlement = quote.settle(cycles_used, cells_used);
        accounts::credit(&mut self.overlay, &tx.fee_payer, settlement.refund)?;
        // #19, #28: an escrow-funded fire's pre-charge left its escrow at
        // admission; what it did not use comes back now. A release asked
        // for by a fire that failed died with it.
        if let Some(key) = &tx.escrow_key {
            escrow::settle(&mut self.overlay, &tx.actor, key, settlement.refund)?;
            if let (Some((key, to)), None) = (release, &error) {
                // The escrow's payee is the fee payer (escrow= requires the
                // actor to pay), so the refund just credited raised the
                // escrow and the balance alike: the shortfall checked above
                // is still absent. Only broken bookkeeping here could fail.
                if let Err(short) = escrow::release(&mut self.overlay, &tx.actor, key, &to)? {
                    return Err(ChainError::Internal(format!(
                        "escrow release of {} found {short:?} after its shortfall check",
                        tx.actor
                    )));
                }
            }
        }
        self.burned += settlement.burned;
        // A timer's priority fee is a tip: paid to the proposer with the
        // user tips; its lane basefee is burned with the basefees (#31).
        self.tips += settlement.tip;
        self.extra_cycles_used += cycles_used;
        self.extra_cells_used += cells_used;
        Ok(Receipt {
            tx_hash,
            sender: tx.sender,
            source: TxSource::Deferred {
                origin_tx_hash: tx.origin_tx_hash,
                fee_payer: tx.fee_payer,
                delivery: tx.delivery,
            },
            status,
            error,
            cycles_used,
            cells_used,
            fee_paid: settlement.fee(),
            burned: settlement.burned,
            tip: settlement.tip,
            events,
            return_value,
            created_actor: None,
        })
    }

    /// A fire that cannot be priced under the config in force: failed,
    /// nothing run or charged, its pre-charge back with its payer (or its
    /// escrow).
    fn unpriced_fire(&mut self, tx: &DeferredTx, tx_hash: Hash, why: &str) -> Result<Receipt> {
        tracing::warn!(actor = %tx.actor, why, "a fire could not be priced and failed");
        accounts::credit(&mut self.overlay, &tx.fee_payer, tx.prepaid)?;
        if let Some(key) = &tx.escrow_key {
            escrow::settle(&mut self.overlay, &tx.actor, key, tx.prepaid)?;
        }
        Ok(Receipt {
            tx_hash,
            sender: tx.sender,
            source: TxSource::Deferred {
                origin_tx_hash: tx.origin_tx_hash,
                fee_payer: tx.fee_payer,
                delivery: tx.delivery,
            },
            status: ReceiptStatus::Failed,
            error: Some(ExecError::new(
                ErrorKind::InvalidInput,
                format!(
                    "this fire cannot be priced under the timer config in force ({why}); its pre-charge was refunded"
                ),
            )),
            cycles_used: 0,
            cells_used: 0,
            fee_paid: 0,
            burned: 0,
            tip: 0,
            events: Vec::new(),
            return_value: None,
            created_actor: None,
        })
    }
}
