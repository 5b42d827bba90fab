//! The session protocol's driver as a library (`protocol::SessionSet`): a
//! `--state` file that `dmlsched session` saved before the driver moved
//! into the library restores, saves again byte for byte and goes on
//! deciding; a bad event answers the command line's error line and changes
//! nothing; the algorithm spec's and opening's messages.
#![cfg(all(feature = "serde", feature = "highs"))]

use dmlsched::model::{Cluster, Job, JobId, RarJob, Resources, WorkerCounts};
use dmlsched::online::JobStatus;
use dmlsched::protocol::{
    Event, OpenOptions, ProtocolError, SessionSet, SpecError, parse_algorithms,
};
use dmlsched::state::ClusterState;
use dmlsched::trace::Arch;

/// Saved by `dmlsched session -a ps=locality,rar=gadget --window 20` of
/// version 0.2.0 on two machines of `examples/data/session/cluster.json`,
/// after outside usage and two submits (jobs 1 and 2, at 0 and 30 s).
const SAVED: &str = include_str!("data/session-state-v1.json");

#[test]
fn a_file_the_command_saved_restores_and_saves_byte_for_byte() {
    let set = SessionSet::restore(SAVED).unwrap();
    assert_eq!(set.save_text().unwrap() + "\n", SAVED);
    assert_eq!(
        set.algorithms(),
        parse_algorithms("ps=locality,rar=gadget").unwrap()
    );
    assert_eq!(
        (set.window(), set.slot_length_s(), set.now_s()),
        (20, 60.0, 30.0)
    );
    assert_eq!(set.status(JobId(1)), Some(JobStatus::Admitted));
    assert_eq!(set.status(JobId(3)), None);
}

#[test]
fn a_restored_set_goes_on_and_apply_answers_as_handle_line() {
    let mut by_line = SessionSet::restore(SAVED).unwrap();
    let mut by_event = SessionSet::restore(SAVED).unwrap();
    let line = by_line
        .handle_line(r#"{"event": "finish", "time_s": 600, "job": 2}"#)
        .unwrap();
    let event = Event::Finish {
        time_s: 600.0,
        job: JobId(2),
    };
    assert_eq!(by_event.apply(event).unwrap(), line);
    assert_eq!(line["released"], true, "{line}");
    assert_eq!(line["status"], "finished", "{line}");
    let all = by_line.handle(Event::Certificate {});
    let names: Vec<_> = all["certificates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["algorithm"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["locality", "gadget"]);
}

#[test]
fn a_bad_event_answers_an_error_line_and_changes_nothing() {
    let mut set = SessionSet::restore(SAVED).unwrap();
    let before = set.save_text().unwrap();
    // Each line, and the error it answers.
    let lines = [
        "garbage",
        r#"{"event": "finish", "time_s": 10, "job": 1}"#,
        r#"{"event": "cancel", "time_s": 100, "job": 99}"#,
        r#"{"event": "submit", "time_s": 100, "job": {"id": 5}}"#,
        r#"{"event": "save"}"#,
        r#"{"event": "resubmit", "time_s": 100, "job": 1}"#,
    ];
    let says = [
        "not an event: expected value at line 1 column 1",
        "time 10 s is not finite or before the session's time 30 s",
        "job 99 was never submitted",
        "not a job: missing field `architecture`",
        "no --state FILE to save to",
        "locality: online primal–dual: invalid instance: job 1 cannot be submitted again: \
         only a job this session rejected can (Admitted)",
    ];
    for (line, says) in lines.into_iter().zip(says) {
        let reply = set.handle_line(line).unwrap();
        assert_eq!(reply, serde_json::json!({ "error": says }), "{line}");
    }
    assert_eq!(set.handle_line("   "), None);
    assert_eq!(set.save_text().unwrap(), before);
    let e = set.certificate(None).unwrap_err();
    assert_eq!(
        e.to_string(),
        "this session runs locality, gadget: name the algorithm, or call certificates()"
    );
    let e = set.certificate(Some("oasis")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "algorithm oasis: not in this session (it runs locality, gadget)"
    );
    assert!(e.is_input());
    assert!(set.certificate(Some("gadget")).is_ok());
}

#[test]
fn an_algorithm_spec_names_one_algorithm_per_architecture() {
    let ring = (Arch::RingAllReduce, "gadget".to_string());
    let ps = (Arch::ParameterServer, "oasis".to_string());
    assert_eq!(parse_algorithms("gadget").unwrap(), vec![ring.clone()]);
    assert_eq!(
        parse_algorithms("ring-all-reduce=gadget, parameter-server=oasis").unwrap(),
        [ring, ps]
    );
    for (spec, says) in [
        (
            "fifo",
            "fifo: \"fifo\" is not a session algorithm (one of oasis, locality, gadget)",
        ),
        ("xx=gadget", "xx=gadget: \"xx\" is not ps or rar"),
        (
            "ps=gadget",
            "ps=gadget: gadget schedules ring-all-reduce jobs, not ps",
        ),
        (
            "locality,rar=gadget",
            "locality,rar=gadget: name the architecture of locality (ps= or rar=)",
        ),
        (
            "ps=oasis,ps=locality",
            "ps=oasis,ps=locality: two algorithms for parameter-server jobs",
        ),
    ] {
        let e = parse_algorithms(spec).unwrap_err();
        assert_eq!(e.to_string(), says);
        assert!(matches!(e, ProtocolError::Spec { .. }) && e.is_input());
    }
    let e = parse_algorithms("ps=gadget").unwrap_err();
    assert!(matches!(
        e,
        ProtocolError::Spec {
            reason: SpecError::WrongArchitecture { .. },
            ..
        }
    ));
}

#[test]
fn opening_checks_the_window_and_the_past_jobs() {
    let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(16.0), 1e10);
    let state = ClusterState::new(&cluster, 60.0).unwrap();
    let ring = |id, gpus| {
        Job::new(
            JobId(id),
            0.0,
            RarJob {
                workers: WorkerCounts::Fixed(gpus),
                iterations: 600,
                ..RarJob::default()
            },
        )
    };
    let past = [ring(0, 2), ring(1, 4)];
    let open = |spec: &str, past: &[Job], window: u32| {
        let mut options = OpenOptions::default();
        options.window = window;
        SessionSet::open(
            state.clone(),
            &parse_algorithms(spec).unwrap(),
            past,
            &options,
        )
    };
    let e = open("gadget", &past, 0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "window 0: must be between 1 and 1048576 slots"
    );
    let e = open("ps=oasis,rar=gadget", &past, 20).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no parameter-server job to learn oasis's price bounds from"
    );
    let e = open("gadget", &[ring(0, 16)], 20).unwrap_err();
    assert!(matches!(e, ProtocolError::PastJob(_)), "{e}");
    let set = open("gadget", &past, 20).unwrap();
    assert_eq!((set.window(), set.now_s()), (20, 0.0));
    fn send<T: Send>(_: &T) {}
    send(&set);
}
