//! The baselines FF, LS and RAND of the SJF-BCO paper, on the same trial
//! machinery (job order `G_j` then id, idle-and-budget candidates,
//! provisional durations, re-simulation).

use rand::rngs::ChaCha8Rng;
use rand::{Rng, RngExt, SeedableRng};

use super::params::SjfBcoParams;
use super::report::SjfBcoReport;
use super::run::{self, Algo};
use crate::algorithms::{Algorithm, Solved};
use crate::model::Instance;

/// FF (first fit): the first `G_j` candidates in server, then local index
/// order; budget by the same bisection as SJF-BCO (one rule, no κ).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RarFf {
    params: SjfBcoParams,
}

impl Algorithm for RarFf {
    const NAME: &'static str = "rar-ff";
    type Params = SjfBcoParams;
    type Report = SjfBcoReport;

    /// FF with these parameters ([`SjfBcoParams::validate`]; κ, λ and the FA-FFP strategy are ignored).
    fn new(params: SjfBcoParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(RarFf { params })
    }

    fn params(&self) -> &SjfBcoParams {
        &self.params
    }

    /// Runs FF; it draws no random numbers (`rng` is not used).
    ///
    /// # Errors
    ///
    /// As [`SjfBco::solve`](super::SjfBco::solve).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        _rng: &mut R,
    ) -> crate::Result<Solved<SjfBcoReport>> {
        run::solve(instance, &self.params, Algo::FirstFit, None)
    }
}

/// LS (list scheduling): the `G_j` candidates with least `U`, ties by
/// server then local index; budget by the same bisection as SJF-BCO. While
/// every `U` is equal it places jobs exactly as FF does.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RarLs {
    params: SjfBcoParams,
}

impl Algorithm for RarLs {
    const NAME: &'static str = "rar-ls";
    type Params = SjfBcoParams;
    type Report = SjfBcoReport;

    /// LS with these parameters ([`SjfBcoParams::validate`]; κ, λ and the FA-FFP strategy are ignored).
    fn new(params: SjfBcoParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(RarLs { params })
    }

    fn params(&self) -> &SjfBcoParams {
        &self.params
    }

    /// Runs LS; it draws no random numbers (`rng` is not used).
    ///
    /// # Errors
    ///
    /// As [`SjfBco::solve`](super::SjfBco::solve).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        _rng: &mut R,
    ) -> crate::Result<Solved<SjfBcoReport>> {
        run::solve(instance, &self.params, Algo::ListScheduling, None)
    }
}

/// RAND: a uniformly random `G_j`-subset of the candidates, in one trial at
/// budget `θ = T`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RarRand {
    params: SjfBcoParams,
}

impl Algorithm for RarRand {
    const NAME: &'static str = "rar-rand";
    type Params = SjfBcoParams;
    type Report = SjfBcoReport;

    /// RAND with these parameters ([`SjfBcoParams::validate`]; κ, λ, the
    /// FA-FFP strategy and the bisection rule are ignored).
    fn new(params: SjfBcoParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(RarRand { params })
    }

    fn params(&self) -> &SjfBcoParams {
        &self.params
    }

    /// Runs RAND with a ChaCha8 stream seeded by one draw from `rng`.
    ///
    /// # Errors
    ///
    /// As [`SjfBco::solve`](super::SjfBco::solve).
    fn solve<R: Rng>(
        &self,
        instance: &Instance,
        rng: &mut R,
    ) -> crate::Result<Solved<SjfBcoReport>> {
        let seed: u64 = rng.random();
        let mut solved = run::solve(
            instance,
            &self.params,
            Algo::Random,
            Some(ChaCha8Rng::seed_from_u64(seed)),
        )?;
        solved.certificate.run = solved.certificate.run.with_seed(seed, "ChaCha8");
        Ok(solved)
    }
}
