//! SJF-BCO: offline scheduling of ring-all-reduce training jobs under communication contention (Yu, Ji, Rajan, Liu, ACM MobiHoc 2022).

pub mod formulation;
