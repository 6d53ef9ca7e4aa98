//! The world of replicas: how the replicas of one run meet at collectives
//! and exchange Send/Recv data.
//!
//! A module runs as N replicas, each on its own thread with its own [`Env`]
//! (its id, its arguments) and one shared [`Hub`]. The hub is deliberately
//! engine-neutral: it only moves values between replicas. Each engine
//! computes the op's result from what the hub hands back (the reference in
//! `eval/collectives.rs`, the fast engine in its own kernel).
//!
//! **Collectives** rendezvous in program order. A replica reaching a
//! collective deposits its contribution under a key made of the
//! instruction (computation and index), how many times this replica has
//! already executed that instruction, and its replica group; it then waits
//! until every member of its group has deposited under the same key and
//! receives all contributions in group order.
//!
//! **Send/Recv** use channels: the k-th Send on channel `c` (counted per
//! replica) and the k-th Recv on `c` form one transfer, made by exactly one
//! sending and one receiving replica (possibly the same one). Send and
//! SendDone never block (the data is buffered in the channel); RecvDone
//! waits until the data has been sent.
//!
//! **Nothing hangs.** Whenever a replica waits, finishes or fails, the hub
//! checks structurally whether any waiter can still be served: a waiter
//! whose group contains a replica that has finished or failed, or a state
//! where every live replica waits and none can proceed, ends the run with a
//! [`RunError::Collective`] naming the instructions. A wall-clock timeout
//! (and the run's deadline) is the last resort.
//!
//! [`Env`]: crate::eval::Env

use std::collections::HashMap;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::RunError;
use crate::ir::{Op, ReplicaGroups};
use crate::literal::Literal;
use crate::verify::VerifiedModule;

/// An instruction of the module: where a replica stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Site {
    pub computation: usize,
    pub instruction: usize,
}

/// What a replica is doing, as far as the hub knows.
#[derive(Clone, Debug)]
enum Status {
    Running,
    /// Waiting at a collective (the rendezvous key) or a RecvDone (the transfer).
    Waiting(Wait, String),
    Finished,
    Failed,
}

#[derive(Clone, Debug, PartialEq)]
enum Wait {
    Collective(Key),
    Transfer(i64, u64),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    site: Site,
    occurrence: u64,
    group: Vec<u32>,
}

#[derive(Debug)]
struct Rendezvous {
    /// Contributions by position in the group.
    values: Vec<Option<Literal>>,
    /// How many members have taken the result.
    taken: usize,
}

impl Rendezvous {
    fn complete(&self) -> bool {
        self.values.iter().all(Option::is_some)
    }
}

#[derive(Debug, Default)]
struct Transfer {
    /// Sending replica and a description of its Send.
    sender: Option<(u32, String)>,
    /// Receiving replica and a description of its Recv.
    receiver: Option<(u32, String)>,
    data: Option<Literal>,
    received: bool,
}

/// A Send or Recv context's request, by its identifier.
#[derive(Clone, Copy, Debug)]
struct Request {
    channel: i64,
    occurrence: u64,
    send: bool,
}

#[derive(Debug, Default)]
struct State {
    status: Vec<Status>,
    occurrences: Vec<HashMap<Site, u64>>,
    rendezvous: HashMap<Key, Rendezvous>,
    transfers: HashMap<(i64, u64), Transfer>,
    sends: Vec<HashMap<i64, u64>>,
    recvs: Vec<HashMap<i64, u64>>,
    requests: Vec<Vec<Request>>,
    /// Set once a mismatch, a deadlock or the time limit is met: every
    /// waiter fails with it (a time limit stays a limit, not a mismatch).
    failure: Option<RunError>,
}

/// Where the replicas of one run synchronise.
#[derive(Debug)]
pub struct Hub {
    replica_count: u32,
    state: Mutex<State>,
    changed: Condvar,
    /// Longest a replica waits at one collective before giving up (the
    /// structural checks normally answer long before).
    pub timeout: Duration,
}

impl Default for Hub {
    fn default() -> Self {
        Hub::new(1)
    }
}

impl Hub {
    /// A hub for `replica_count` replicas, all running.
    pub fn new(replica_count: u32) -> Hub {
        let n = replica_count as usize;
        let state = State {
            status: vec![Status::Running; n],
            occurrences: vec![HashMap::new(); n],
            sends: vec![HashMap::new(); n],
            recvs: vec![HashMap::new(); n],
            requests: vec![Vec::new(); n],
            ..State::default()
        };
        Hub { replica_count, state: Mutex::new(state), changed: Condvar::new(), timeout: Duration::from_secs(60) }
    }

    pub fn replica_count(&self) -> u32 {
        self.replica_count
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A replica that panicked while holding the lock leaves the state
        // consistent enough to report errors; keep going.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Replica `replica` has ended (successfully or not). Waiters that can no
    /// longer be served learn it at once.
    pub fn finish(&self, replica: u32, ok: bool) {
        let mut s = self.lock();
        if let Some(st) = s.status.get_mut(replica as usize) {
            *st = if ok { Status::Finished } else { Status::Failed };
        }
        drop(s);
        self.changed.notify_all();
    }

    /// Deposits `replica`'s contribution to the collective at `site` among
    /// `group` (replica ids in the group's order) and waits for the others.
    /// Returns every member's contribution in group order. `what` names the
    /// instruction for messages.
    pub fn exchange(
        &self,
        replica: u32,
        site: Site,
        what: &str,
        group: &[u32],
        contribution: Literal,
        deadline: Option<Instant>,
    ) -> Result<Vec<Literal>, RunError> {
        let r = replica as usize;
        let position = group
            .iter()
            .position(|&g| g == replica)
            .ok_or_else(|| RunError::Collective(format!("{what}: replica {replica} is not in its own replica group {group:?}")))?;
        let mut s = self.lock();
        if r >= s.status.len() {
            return Err(RunError::Collective(format!("{what}: replica {replica} is not a replica of this run")));
        }
        let count = s.occurrences[r].entry(site).or_insert(0);
        let occurrence = *count;
        *count += 1;
        let key = Key { site, occurrence, group: group.to_vec() };
        let entry = s.rendezvous.entry(key.clone()).or_insert_with(|| Rendezvous { values: vec![None; group.len()], taken: 0 });
        entry.values[position] = Some(contribution);
        s.status[r] = Status::Waiting(Wait::Collective(key.clone()), describe(what, occurrence));
        self.changed.notify_all();
        let s = self.wait(s, replica, deadline, |s| s.rendezvous.get(&key).is_some_and(Rendezvous::complete))?;
        let mut s = s;
        s.status[r] = Status::Running;
        let rv = s.rendezvous.get_mut(&key).ok_or_else(|| RunError::Internal("rendezvous vanished".into()))?;
        let values: Vec<Literal> = rv.values.iter().flatten().cloned().collect();
        rv.taken += 1;
        if rv.taken == group.len() {
            s.rendezvous.remove(&key);
        }
        Ok(values)
    }

    /// Waits (releasing the lock) until `ready` holds, a mismatch or deadlock
    /// is found, or time runs out.
    fn wait<'a>(
        &'a self,
        mut s: MutexGuard<'a, State>,
        replica: u32,
        deadline: Option<Instant>,
        ready: impl Fn(&State) -> bool,
    ) -> Result<MutexGuard<'a, State>, RunError> {
        let give_up = Instant::now() + self.timeout;
        let give_up = deadline.map_or(give_up, |d| d.min(give_up));
        loop {
            if ready(&s) {
                return Ok(s);
            }
            if s.failure.is_none() {
                s.failure = stuck(&s, replica).map(RunError::Collective);
                if s.failure.is_some() {
                    self.changed.notify_all();
                }
            }
            if let Some(f) = &s.failure {
                let f = f.clone();
                s.status[replica as usize] = Status::Failed;
                return Err(f);
            }
            let now = Instant::now();
            if now >= give_up {
                let what = match &s.status[replica as usize] {
                    Status::Waiting(_, w) => w.clone(),
                    _ => "a collective".into(),
                };
                let f = if deadline.is_some_and(|d| now >= d) {
                    RunError::Limit(format!("replica {replica} was still waiting at {what} when the run's time limit passed"))
                } else {
                    RunError::Collective(format!(
                        "deadlock: replica {replica} waited at {what} for {:?} without its group arriving",
                        self.timeout
                    ))
                };
                s.failure = Some(f.clone());
                s.status[replica as usize] = Status::Failed;
                self.changed.notify_all();
                return Err(f);
            }
            // Wake up now and then even without notification, so a deadline
            // passes on time.
            let step = (give_up - now).min(Duration::from_millis(200));
            s = self.changed.wait_timeout(s, step).unwrap_or_else(|e| e.into_inner()).0;
        }
    }

    /// Send: buffers `data` as `replica`'s next transfer on `channel`.
    /// Returns the request identifier of the Send context.
    pub fn send(&self, replica: u32, channel: i64, what: &str, data: Literal) -> Result<u32, RunError> {
        let r = replica as usize;
        let mut s = self.lock();
        let count = s.sends.get_mut(r).ok_or_else(|| not_a_replica(replica))?.entry(channel).or_insert(0);
        let occurrence = *count;
        *count += 1;
        let t = s.transfers.entry((channel, occurrence)).or_default();
        if let Some((other, first)) = &t.sender {
            return Err(RunError::Collective(format!(
                "channel {channel}: transfer {occurrence} is sent by replica {other} ({first}) and by replica {replica} ({what}); a channel pairs one Send with one Recv"
            )));
        }
        t.sender = Some((replica, what.to_string()));
        t.data = Some(data);
        let id = push_request(&mut s, r, Request { channel, occurrence, send: true })?;
        drop(s);
        self.changed.notify_all();
        Ok(id)
    }

    /// Recv: claims `replica`'s next transfer on `channel`. Returns the
    /// request identifier of the Recv context.
    pub fn recv(&self, replica: u32, channel: i64, what: &str) -> Result<u32, RunError> {
        let r = replica as usize;
        let mut s = self.lock();
        let count = s.recvs.get_mut(r).ok_or_else(|| not_a_replica(replica))?.entry(channel).or_insert(0);
        let occurrence = *count;
        *count += 1;
        let t = s.transfers.entry((channel, occurrence)).or_default();
        if let Some((other, first)) = &t.receiver {
            return Err(RunError::Collective(format!(
                "channel {channel}: transfer {occurrence} is received by replica {other} ({first}) and by replica {replica} ({what}); a channel pairs one Send with one Recv"
            )));
        }
        t.receiver = Some((replica, what.to_string()));
        push_request(&mut s, r, Request { channel, occurrence, send: false })
    }

    /// SendDone: checks the context belongs to a Send on `channel`. The data
    /// is already buffered, so the transfer is complete from the sender's side.
    pub fn send_done(&self, replica: u32, channel: i64, what: &str, request: u32) -> Result<(), RunError> {
        let s = self.lock();
        request_of(&s, replica, channel, what, request, true)?;
        Ok(())
    }

    /// RecvDone: waits for the data of the Recv context's transfer.
    pub fn recv_done(&self, replica: u32, channel: i64, what: &str, request: u32, deadline: Option<Instant>) -> Result<Literal, RunError> {
        let mut s = self.lock();
        let req = request_of(&s, replica, channel, what, request, false)?;
        let key = (req.channel, req.occurrence);
        s.status[replica as usize] = Status::Waiting(Wait::Transfer(key.0, key.1), format!("{what} (channel {channel})"));
        self.changed.notify_all();
        let mut s = self.wait(s, replica, deadline, |s| s.transfers.get(&key).is_some_and(|t| t.data.is_some()))?;
        s.status[replica as usize] = Status::Running;
        let t = s.transfers.get_mut(&key).ok_or_else(|| RunError::Internal("transfer vanished".into()))?;
        t.received = true;
        t.data.take().ok_or_else(|| RunError::Internal("transfer data vanished".into()))
    }

    /// After every replica finished: each Send was received and each Recv
    /// was matched by a Send (a missing partner is an error, not silence).
    pub fn end_check(&self) -> Result<(), RunError> {
        let s = self.lock();
        let mut keys: Vec<&(i64, u64)> = s.transfers.keys().collect();
        keys.sort();
        for key in keys {
            let t = &s.transfers[key];
            match (&t.sender, &t.receiver) {
                (Some((r, what)), None) => {
                    return Err(RunError::Collective(format!(
                        "missing partner: {what} on replica {r} sent transfer {} on channel {} that no Recv received",
                        key.1, key.0
                    )))
                }
                (Some((r, what)), Some(_)) if !t.received => {
                    return Err(RunError::Collective(format!(
                        "missing partner: {what} on replica {r} sent transfer {} on channel {} that no RecvDone took",
                        key.1, key.0
                    )))
                }
                (None, Some((r, what))) => {
                    return Err(RunError::Collective(format!(
                        "missing partner: {what} on replica {r} posted a Recv for transfer {} on channel {} that no Send matched",
                        key.1, key.0
                    )))
                }
                _ => {}
            }
        }
        Ok(())
    }
}

fn describe(what: &str, occurrence: u64) -> String {
    if occurrence == 0 {
        what.to_string()
    } else {
        format!("{what} (execution {})", occurrence + 1)
    }
}

fn not_a_replica(replica: u32) -> RunError {
    RunError::Collective(format!("replica {replica} is not a replica of this run"))
}

fn push_request(s: &mut State, r: usize, req: Request) -> Result<u32, RunError> {
    let list = s.requests.get_mut(r).ok_or_else(|| not_a_replica(r as u32))?;
    let id = u32::try_from(list.len()).map_err(|_| RunError::Limit("too many Send/Recv requests".into()))?;
    list.push(req);
    Ok(id)
}

fn request_of(s: &State, replica: u32, channel: i64, what: &str, request: u32, send: bool) -> Result<Request, RunError> {
    let kind = if send { "Send" } else { "Recv" };
    let req = s
        .requests
        .get(replica as usize)
        .and_then(|l| l.get(request as usize))
        .copied()
        .filter(|q| q.send == send)
        .ok_or_else(|| RunError::Collective(format!("{what}: its operand is not a context made by a {kind} of this replica")))?;
    if req.channel != channel {
        return Err(RunError::Collective(format!(
            "{what} on channel {channel} was given the context of a {kind} on channel {} (mismatched pair)",
            req.channel
        )));
    }
    Ok(req)
}

/// Whether the waiter `me` can never be served: the message if so.
fn stuck(s: &State, me: u32) -> Option<String> {
    // A member of my group (or the partner of my transfer) has ended.
    if let Some(Status::Waiting(wait, what)) = s.status.get(me as usize) {
        match wait {
            Wait::Collective(key) => {
                let ready = |m: u32| s.rendezvous.get(key).is_some_and(|rv| rv.values.get(position(key, m)).is_some_and(Option::is_some));
                for &m in &key.group {
                    match s.status.get(m as usize) {
                        Some(Status::Finished) if !ready(m) => {
                            return Some(format!("replica {me} waits at {what}, but replica {m} of its group finished without reaching it"))
                        }
                        Some(Status::Failed) if !ready(m) => {
                            return Some(format!("replica {me} waits at {what}, but replica {m} of its group failed before reaching it"))
                        }
                        _ => {}
                    }
                }
            }
            Wait::Transfer(channel, k) => {
                let sender_known = s.transfers.get(&(*channel, *k)).is_some_and(|t| t.sender.is_some());
                let others_done =
                    s.status.iter().enumerate().all(|(i, st)| i == me as usize || matches!(st, Status::Finished | Status::Failed));
                if !sender_known && others_done {
                    return Some(format!("missing partner: replica {me} waits at {what} for a Send that no replica will make"));
                }
            }
        }
    }
    // Every live replica waits and none can proceed.
    let mut waiting = Vec::new();
    for (i, st) in s.status.iter().enumerate() {
        match st {
            Status::Running => return None,
            Status::Waiting(wait, what) => {
                let served = match wait {
                    Wait::Collective(key) => s.rendezvous.get(key).is_some_and(Rendezvous::complete),
                    Wait::Transfer(c, k) => s.transfers.get(&(*c, *k)).is_some_and(|t| t.data.is_some()),
                };
                if served {
                    return None;
                }
                waiting.push(format!("replica {i} waits at {what}"));
            }
            Status::Finished | Status::Failed => {}
        }
    }
    let ended: Vec<String> =
        s.status.iter().enumerate().filter(|(_, st)| matches!(st, Status::Finished | Status::Failed)).map(|(i, _)| i.to_string()).collect();
    let mut message = format!("deadlock: {}", waiting.join(", "));
    if !ended.is_empty() {
        message.push_str(&format!("; replica(s) {} ended", ended.join(", ")));
    }
    Some(message)
}

fn position(key: &Key, m: u32) -> usize {
    key.group.iter().position(|&g| g == m).unwrap_or(usize::MAX)
}

/// The replica group of `replica` among `groups` (empty: all replicas, in
/// id order). The groups must partition `[0, replica_count)`: every id in
/// range, none twice, all present (document: `replica_groups` "must either
/// be empty ... or contain the same number of elements as the number of
/// replicas").
pub fn group_of(groups: &ReplicaGroups, replica: u32, replica_count: u32) -> Result<Vec<u32>, String> {
    if groups.is_empty() {
        return Ok((0..replica_count).collect());
    }
    check_groups(groups, replica_count)?;
    groups
        .iter()
        .find(|g| g.contains(&(replica as i64)))
        .map(|g| g.iter().map(|&i| i as u32).collect())
        .ok_or_else(|| format!("replica {replica} is in no replica group"))
}

/// `groups` partition `[0, replica_count)`.
pub fn check_groups(groups: &ReplicaGroups, replica_count: u32) -> Result<(), String> {
    let n = replica_count as usize;
    let mut seen = vec![false; n];
    for g in groups {
        for &id in g {
            let i = usize::try_from(id).ok().filter(|&i| i < n).ok_or_else(|| {
                format!("replica_groups names replica {id}, out of range for {replica_count} replica(s) (ids are in [0, {replica_count}))")
            })?;
            if seen[i] {
                return Err(format!("replica_groups names replica {id} twice"));
            }
            seen[i] = true;
        }
    }
    if let Some(missing) = seen.iter().position(|&s| !s) {
        return Err(format!(
            "replica_groups must name every one of the {replica_count} replicas exactly once; replica {missing} is missing"
        ));
    }
    Ok(())
}

/// Replica ids of `source_target_pairs` are in range.
pub fn check_pairs(pairs: &[(i64, i64)], replica_count: u32) -> Result<(), String> {
    for &(s, t) in pairs {
        for id in [s, t] {
            if id < 0 || id >= replica_count as i64 {
                return Err(format!(
                    "source_target_pairs names replica {id}, out of range for {replica_count} replica(s) (ids are in [0, {replica_count}))"
                ));
            }
        }
    }
    Ok(())
}

/// Checks, before any replica starts, that every collective of the module
/// fits `replica_count` replicas (the verifier does not know the count).
pub fn check_module(module: &VerifiedModule, replica_count: u32) -> Result<(), RunError> {
    for c in &module.module().computations {
        for instr in &c.instructions {
            let checked = match &instr.op {
                Op::AllGather { replica_groups, .. }
                | Op::AllReduce { replica_groups, .. }
                | Op::AllToAll { replica_groups, .. }
                | Op::ReduceScatter { replica_groups, .. }
                | Op::CrossReplicaSum { replica_groups } => check_groups_or_empty(replica_groups, replica_count),
                Op::CollectivePermute { source_target_pairs, .. } => check_pairs(source_target_pairs, replica_count),
                _ => Ok(()),
            }
            .and_then(|()| check_group_size(&instr.op, replica_count));
            if let Err(e) = checked {
                return Err(RunError::Collective(format!(
                    "instruction `{}` ({}) in computation `{}`: {e}",
                    instr.name,
                    instr.op.name(),
                    c.name
                )));
            }
        }
    }
    Ok(())
}

fn check_groups_or_empty(groups: &ReplicaGroups, replica_count: u32) -> Result<(), String> {
    if groups.is_empty() {
        Ok(())
    } else {
        check_groups(groups, replica_count)
    }
}

/// With empty `replica_groups` the one group has all replicas: the op's
/// `shard_count`/`split_count` must then be the replica count.
pub fn check_group_size(op: &Op, replica_count: u32) -> Result<(), String> {
    let (attr, value, groups) = match op {
        Op::AllGather { shard_count: Some(k), replica_groups, .. } => ("shard_count", *k, replica_groups),
        Op::ReduceScatter { shard_count: Some(k), replica_groups, .. } => ("shard_count", *k, replica_groups),
        Op::AllToAll { split_count, replica_groups, .. } => ("split_count", *split_count, replica_groups),
        _ => return Ok(()),
    };
    if groups.is_empty() && value != replica_count as i64 {
        return Err(format!(
            "{attr} is {value}, but replica_groups is empty, so the group is all {replica_count} replica(s): {attr} must be {replica_count}"
        ));
    }
    Ok(())
}
