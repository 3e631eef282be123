//! Information-velocity saturation (seed 000 Path 16) and the velocity update of stage 10.
//!
//! `saturation = 0.60 × velocity_decay + 0.25 × edge_density_norm + 0.15 × turn_floor`, with
//! `velocity_decay = 1 − ewma / max(peak, 1.0)`, `edge_density_norm = min(edges/nodes / 2.0, 1)`
//! and `turn_floor = min(turn / 15, 1)`. The EWMA uses α = 0.4 over the non-negative node delta.

use crate::domain::VelocityState;

/// EWMA smoothing factor; the seed hard-codes 0.4.
pub const EWMA_ALPHA: f64 = 0.4;
/// Weight of velocity decay, the primary saturation indicator.
pub const W_VELOCITY: f64 = 0.60;
/// Weight of graph richness (edge density).
pub const W_DENSITY: f64 = 0.25;
/// Weight of the turn floor, which keeps early turns from reading as saturated.
pub const W_TURN_FLOOR: f64 = 0.15;
/// Edges per node at which richness counts as full.
pub const DENSITY_NORM: f64 = 2.0;
/// Turn at which the turn floor reaches 1.
pub const TURN_FLOOR_TURNS: f64 = 15.0;

/// The three components and their weighted sum, kept apart for the signals panel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Saturation {
    pub velocity_decay: f64,
    pub edge_density_norm: f64,
    pub turn_floor: f64,
    pub score: f64,
}

/// Saturation from a velocity pair, the graph's edge and node counts and the turn number.
pub fn saturation(ewma: f64, peak: f64, edges: u32, nodes: u32, turn_number: u32) -> Saturation {
    let velocity_decay = (1.0 - ewma / peak.max(1.0)).clamp(0.0, 1.0);
    let edge_density_norm = if nodes == 0 {
        0.0
    } else {
        (f64::from(edges) / f64::from(nodes) / DENSITY_NORM).min(1.0)
    };
    let turn_floor = (f64::from(turn_number) / TURN_FLOOR_TURNS).min(1.0);
    let score =
        W_VELOCITY * velocity_decay + W_DENSITY * edge_density_norm + W_TURN_FLOOR * turn_floor;
    Saturation {
        velocity_decay,
        edge_density_norm,
        turn_floor,
        score,
    }
}

/// One EWMA step: returns `(new_ewma, new_peak)` for a node count moving `prev → current`.
///
/// The delta never goes negative (merged or superseded nodes do not count as negative yield).
pub fn ewma_step(ewma: f64, peak: f64, prev_count: u32, current_count: u32) -> (f64, f64) {
    let delta = f64::from(current_count.saturating_sub(prev_count));
    let new_ewma = EWMA_ALPHA * delta + (1.0 - EWMA_ALPHA) * ewma;
    (new_ewma, peak.max(delta))
}

/// Stage 10's velocity update for both graphs.
pub fn update_velocity(
    state: &VelocityState,
    surface_nodes: u32,
    canonical_nodes: u32,
) -> VelocityState {
    let (surface_velocity_ewma, surface_velocity_peak) = ewma_step(
        state.surface_velocity_ewma,
        state.surface_velocity_peak,
        state.prev_surface_node_count,
        surface_nodes,
    );
    let (canonical_velocity_ewma, canonical_velocity_peak) = ewma_step(
        state.canonical_velocity_ewma,
        state.canonical_velocity_peak,
        state.prev_canonical_node_count,
        canonical_nodes,
    );
    VelocityState {
        surface_velocity_ewma,
        surface_velocity_peak,
        prev_surface_node_count: surface_nodes,
        canonical_velocity_ewma,
        canonical_velocity_peak,
        prev_canonical_node_count: canonical_nodes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    #[test]
    fn ewma_worked_example() {
        // Node counts over four turns: 0 → 5 → 9 → 10 → 10.
        let mut v = VelocityState::default();
        let counts = [5, 9, 10, 10];
        let mut trace = Vec::new();
        for c in counts {
            v = update_velocity(&v, c, 0);
            trace.push((v.surface_velocity_ewma, v.surface_velocity_peak));
        }
        // delta 5: 0.4×5 = 2.0, peak 5
        close(trace[0].0, 2.0);
        close(trace[0].1, 5.0);
        // delta 4: 0.4×4 + 0.6×2.0 = 2.8
        close(trace[1].0, 2.8);
        // delta 1: 0.4 + 0.6×2.8 = 2.08
        close(trace[2].0, 2.08);
        // delta 0: 0.6×2.08 = 1.248; peak stays 5
        close(trace[3].0, 1.248);
        close(trace[3].1, 5.0);
    }

    #[test]
    fn saturation_worked_example() {
        // After the example above: ewma 1.248, peak 5, 10 nodes, 12 edges, turn 5.
        let s = saturation(1.248, 5.0, 12, 10, 5);
        close(s.velocity_decay, 1.0 - 1.248 / 5.0); // 0.7504
        close(s.edge_density_norm, 0.6); // 1.2 edges/node / 2.0
        close(s.turn_floor, 5.0 / 15.0);
        // 0.60×0.7504 + 0.25×0.6 + 0.15×0.3333… = 0.45024 + 0.15 + 0.05 = 0.65024
        close(s.score, 0.650_24);
    }

    #[test]
    fn saturation_bounds() {
        // At peak velocity, empty graph, turn 0: nothing saturated.
        close(saturation(5.0, 5.0, 0, 0, 0).score, 0.0);
        // Stalled, dense, late: fully saturated.
        close(saturation(0.0, 5.0, 100, 10, 30).score, 1.0);
        // A peak below 1 is treated as 1 so a trickle of one node cannot look like full speed.
        close(saturation(0.4, 0.4, 0, 1, 0).velocity_decay, 0.6);
    }

    #[test]
    fn delta_never_negative() {
        let (ewma, peak) = ewma_step(2.0, 4.0, 10, 7);
        close(ewma, 1.2);
        close(peak, 4.0);
    }
}
