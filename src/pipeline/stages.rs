//! The stages, as methods of [`Interview`](super::Interview), grouped by what they touch:
//! input ([`load`]: 1, 2, 2.5), the graph ([`graph`]: 3, 4, 4.5), the decision ([`decide`]:
//! 5, 6, 7), the reply ([`respond`]: 8, 9, 10), and a researcher's override of the question
//! ([`regenerate`]).

mod decide;
mod graph;
mod load;
mod regenerate;
mod respond;
