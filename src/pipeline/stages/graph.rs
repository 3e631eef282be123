//! Stages 3 (extraction), 4 (graph update) and 4.5 (slot discovery).

use std::collections::HashSet;
use std::sync::Arc;

use crate::config::Methodology;
use crate::domain::Understanding;
use crate::graph::canonical::{SlotContext, SlotUpdate, aggregate_edges};
use crate::graph::discovery;
use crate::graph::model::{KgNode, SlotMapping};
use crate::graph::node_state::{NodeRegistration, NodeStateTracker};
use crate::graph::surface::{
    ExtractedConcept, SurfaceUpdate, TurnExtraction, TurnOrigin, apply_extraction, norm,
};
use crate::llm::Role;
use crate::pipeline::contracts::{
    EdgeRef, ExtractionOutput, ExtractionResult, GraphUpdateOutput, NodeRef, SlotDiscoveryOutput,
    SlotRef, SourcedConcept, SourcedRelationship,
};
use crate::pipeline::ids::IdMinter;
use crate::pipeline::interview::{CallRecord, Interview, TurnRun, llm_error};
use crate::pipeline::{EventSink, PipelineError};
use crate::prompts::{
    Extraction, ExtractionInput, Rejection, extraction_prompt, parse_extraction_reply,
    rejection_feedback, screen_extraction,
};
use crate::srl::SrlAnalysis;
use crate::store::StoreOps;
use crate::time::now_rfc3339;
use crate::understanding::{
    KnownConcept, OfflineInput, TurnContext as UnderstandingContext, TypeIndex,
    extract_offline_in_context, propose_slots_offline,
};

/// Characters of SRL hints given to the extraction prompt.
const SRL_HINT_CHARS: usize = 1_500;

/// Registers new nodes, counts new edges and credits the previous focus with the turn's yield
/// (seed 000 Path 19, stage 4).
fn track_update(
    tracker: &mut NodeStateTracker,
    methodology: &Methodology,
    update: &SurfaceUpdate,
    turn: u32,
) {
    for node in &update.new_nodes {
        let node_type = methodology.node_type(&node.node_type);
        let level = node_type.map_or(0, |t| t.level);
        tracker.register_node(
            &NodeRegistration {
                node_id: &node.id,
                label: &node.label,
                node_type: &node.node_type,
                depth: level,
                level,
                is_terminal: node_type.is_some_and(|t| t.terminal),
            },
            turn,
        );
    }
    for edge in &update.new_edges {
        tracker.update_edge_counts(&edge.source_node_id, 1, 0, Some(&edge.target_node_id));
        tracker.update_edge_counts(&edge.target_node_id, 0, 1, Some(&edge.source_node_id));
    }
    if let Some(previous) = tracker.previous_focus.clone() {
        tracker.record_yield(&previous, turn, update.changes);
    }
}

/// How many of `updated` were live before and are superseded now.
fn newly_superseded(before: &[KgNode], updated: &[KgNode]) -> usize {
    updated
        .iter()
        .filter(|n| {
            n.superseded_by.is_some()
                && before
                    .iter()
                    .any(|old| old.id == n.id && old.superseded_by.is_none())
        })
        .count()
}

fn describe_update(update: &SurfaceUpdate) -> String {
    let mut summary = format!(
        "+{} nodes ({} merged), +{} edges",
        update.new_nodes.len(),
        update.updated_nodes.len(),
        update.new_edges.len()
    );
    if !update.rejected_edges.is_empty() {
        let reasons: Vec<String> = update
            .rejected_edges
            .iter()
            .map(|r| format!("{} -{}-> {}: {}", r.source, r.edge_type, r.target, r.reason))
            .collect();
        summary.push_str(&format!(", rejected: {}", reasons.join("; ")));
    }
    summary
}

impl Interview {
    /// Slot discovery for the turn's new nodes: proposals from one call covering every node
    /// type (or, in offline understanding, from embedding clusters), all embedded in one pass,
    /// then integrated.
    async fn discover(
        &self,
        turn: u32,
        new_nodes: &[KgNode],
        events: &EventSink,
    ) -> Result<(SlotUpdate, Vec<CallRecord>), PipelineError> {
        let groups = discovery::groups(new_nodes);
        let mut calls = Vec::new();
        let proposals = if groups.is_empty() {
            Vec::new()
        } else if self.spec.understanding == Understanding::Offline {
            groups
                .iter()
                .flat_map(|(node_type, nodes)| {
                    propose_slots_offline(
                        node_type,
                        nodes,
                        &self.world.slots,
                        self.spec
                            .methodology
                            .thresholds
                            .canonical_similarity_threshold,
                    )
                })
                .collect()
        } else {
            let prompt = discovery::slot_prompt(&self.spec.methodology, &groups, &self.world.slots);
            let schema = Arc::new(crate::prompts::schema::slot_schema(&self.spec.methodology));
            let request = self
                .services
                .llm
                .request(Role::SlotDiscovery, String::new(), prompt, None, turn)
                .map_err(|e| llm_error(Role::SlotDiscovery, e))?
                .with_schema(schema);
            let (proposals, call) = self
                .call_and_read(&request, events, |text| {
                    discovery::proposals_of(text).map_err(|e| PipelineError::discovery(e, None))
                })
                .await?;
            calls.push(call);
            proposals
        };
        let texts = discovery::proposal_texts(&proposals);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embeddings = if refs.is_empty() {
            Vec::new()
        } else {
            self.services.embedder.embed(&refs)?
        };
        let mapped: HashSet<String> = self
            .world
            .mappings
            .iter()
            .map(|m| m.surface_node_id.clone())
            .collect();
        let ctx = SlotContext {
            session_id: &self.world.session_id,
            turn,
            mapped_nodes: &mapped,
            thresholds: self.spec.methodology.thresholds,
        };
        let mut slot_ids = IdMinter::new(&self.world.session_id, turn, "slot");
        let mut new_id = || slot_ids.mint();
        let update = discovery::integrate_turn(
            &self.world.slots,
            &groups,
            &proposals,
            &embeddings,
            &ctx,
            &mut new_id,
        );
        Ok((update, calls))
    }

    /// Stage 3: concepts and relationships from the answer, each tied to its utterance.
    pub(crate) async fn extraction(
        &mut self,
        run: &mut TurnRun,
        events: &EventSink,
    ) -> Result<String, PipelineError> {
        let saved = run.ctx.utterance_saving()?.clone();
        let srl = run.ctx.srl_preprocessing()?;
        let analysis = SrlAnalysis {
            discourse_relations: srl.discourse_relations.clone(),
            srl_frames: srl.srl_frames.clone(),
            method: srl.status.clone(),
        };
        let question = super::load::answered_question(&run.ctx)?;
        let (extraction, rejected, calls) = match self.spec.understanding {
            Understanding::Offline => {
                // The extractor reads the answer as one line: a hard line break in a typed or
                // filed answer would otherwise cut a phrase in two. With stage 2.5 off, or when
                // the answer had line breaks, it parses the flattened answer itself.
                let flat = saved
                    .user_utterance
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                let analysis = if self.services.settings.enable_srl && flat == saved.user_utterance
                {
                    analysis
                } else {
                    crate::srl::analyze(&flat)
                };
                let types = self.type_index()?;
                let known: Vec<KnownConcept<'_>> = self
                    .world
                    .live_nodes()
                    .map(|n| KnownConcept {
                        label: &n.label,
                        node_type: &n.node_type,
                    })
                    .collect();
                let extraction = extract_offline_in_context(
                    &OfflineInput {
                        methodology: &self.spec.methodology,
                        answer: &flat,
                        question: &question,
                        srl: &analysis,
                    },
                    &UnderstandingContext {
                        topic: &self.spec.concept.name,
                        known: &known,
                    },
                    &types,
                    self.services.embedder.as_ref(),
                )?;
                let (kept, rejected) =
                    screen_extraction(extraction, &saved.user_utterance, &self.spec.methodology);
                (kept, rejected, Vec::new())
            }
            Understanding::Llm => {
                self.extract_with_llm(run, &saved.user_utterance, &question, &analysis, events)
                    .await?
            }
        };
        if !rejected.is_empty() {
            tracing::warn!(
                turn = run.turn,
                rejected = %rejected.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
                "extraction items rejected"
            );
        }
        let sourced = |id: &str| id.to_owned();
        let result = ExtractionResult {
            concepts: extraction
                .concepts
                .into_iter()
                .map(|concept| SourcedConcept {
                    concept,
                    source_utterance_id: sourced(&saved.user_utterance_id),
                })
                .collect(),
            relationships: extraction
                .relationships
                .into_iter()
                .map(|relationship| SourcedRelationship {
                    relationship,
                    source_utterance_id: sourced(&saved.user_utterance_id),
                })
                .collect(),
        };
        let output = ExtractionOutput {
            concept_count: result.concepts.len(),
            relationship_count: result.relationships.len(),
            extraction: result,
            methodology: self.spec.methodology.method.name.clone(),
            timestamp: now_rfc3339(),
        };
        let mut summary = format!(
            "{} concepts, {} relationships",
            output.concept_count, output.relationship_count
        );
        if !rejected.is_empty() {
            let named: Vec<String> = rejected.iter().map(ToString::to_string).collect();
            summary.push_str(&format!(", rejected: {}", named.join("; ")));
        }
        self.commit(run, output, None, &calls, |_| Ok(()))?;
        Ok(summary)
    }

    /// Stage 3 on the LLM: one call, the reply parsed and screened; when the screen rejects
    /// anything, one more call with the reasons appended, whose screened reply is kept.
    async fn extract_with_llm(
        &self,
        run: &TurnRun,
        answer: &str,
        question: &str,
        analysis: &SrlAnalysis,
        events: &EventSink,
    ) -> Result<(Extraction, Vec<Rejection>, Vec<CallRecord>), PipelineError> {
        let hints = analysis.hints(SRL_HINT_CHARS);
        let labels = &run.ctx.context_loading()?.recent_node_labels;
        let label_refs: Vec<&str> = labels.iter().map(String::as_str).collect();
        let prompt = extraction_prompt(&ExtractionInput {
            methodology: &self.spec.methodology,
            concept: &self.spec.concept,
            answer,
            question,
            existing_labels: &label_refs,
            srl_hints: &hints,
        });
        let schema = Arc::new(crate::prompts::schema::extraction_schema(
            &self.spec.methodology,
        ));
        let parse = |text: &str| {
            parse_extraction_reply(text, &self.spec.methodology)
                .map(|e| screen_extraction(e, answer, &self.spec.methodology))
                .map_err(|source| PipelineError::Contract {
                    role: Role::Extraction,
                    source,
                })
        };
        let request = self
            .prompt_request(Role::Extraction, prompt.clone(), run.turn)?
            .with_schema(Arc::clone(&schema));
        let ((kept, rejected), first) = self.call_and_read(&request, events, parse).await?;
        if rejected.is_empty() {
            return Ok((kept, rejected, vec![first]));
        }
        let retry_prompt = crate::prompts::Prompt {
            user: format!("{}\n\n{}", prompt.user, rejection_feedback(&rejected)),
            ..prompt
        };
        let request = self
            .prompt_request(Role::Extraction, retry_prompt, run.turn)?
            .with_schema(schema);
        let ((kept, still_rejected), second) = self.call_and_read(&request, events, parse).await?;
        Ok((kept, still_rejected, vec![first, second]))
    }

    /// The methodology's node types embedded for offline typing, built on first use.
    fn type_index(&mut self) -> Result<Arc<TypeIndex>, PipelineError> {
        if let Some(index) = &self.type_index {
            return Ok(Arc::clone(index));
        }
        let index = Arc::new(TypeIndex::build(
            &self.spec.methodology,
            self.services.embedder.as_ref(),
        )?);
        self.type_index = Some(Arc::clone(&index));
        Ok(index)
    }

    /// Embeddings for the concepts that need one: a label and node type that exactly match a
    /// live node merge without the semantic step, so they are not embedded (one batch for the
    /// rest).
    fn embed_unmatched(
        &self,
        concepts: &[ExtractedConcept],
    ) -> Result<Vec<Option<Vec<f32>>>, PipelineError> {
        let known: HashSet<(String, &str)> = self
            .world
            .live_nodes()
            .map(|n| (norm(&n.label), n.node_type.as_str()))
            .collect();
        let is_known =
            |c: &ExtractedConcept| known.contains(&(norm(&c.label), c.node_type.as_str()));
        let wanted: Vec<&str> = concepts
            .iter()
            .filter(|c| !is_known(c))
            .map(|c| c.label.as_str())
            .collect();
        let mut computed = if wanted.is_empty() {
            Vec::new()
        } else {
            self.services.embedder.embed(&wanted)?
        }
        .into_iter();
        Ok(concepts
            .iter()
            .map(|c| if is_known(c) { None } else { computed.next() })
            .collect())
    }

    /// Stage 4: three-step dedup, cross-turn edges, tracker registration, edge counts and the
    /// previous focus's yield (seed 000 Paths 3, 12, 13, 19).
    pub(crate) fn graph_update(&mut self, run: &mut TurnRun) -> Result<String, PipelineError> {
        let extraction = &run.ctx.extraction()?.extraction;
        let utterance_id = run.ctx.utterance_saving()?.user_utterance_id.clone();
        let concepts: Vec<_> = extraction
            .concepts
            .iter()
            .map(|c| c.concept.clone())
            .collect();
        let relationships: Vec<_> = extraction
            .relationships
            .iter()
            .map(|r| r.relationship.clone())
            .collect();
        let embeddings = self.embed_unmatched(&concepts)?;
        let recorded_at = now_rfc3339();
        let origin = TurnOrigin {
            session_id: &self.world.session_id,
            turn: run.turn,
            utterance_id: &utterance_id,
            recorded_at: &recorded_at,
        };
        let mut surface_ids = IdMinter::new(&self.world.session_id, run.turn, "surface");
        let mut new_id = || surface_ids.mint();
        let update = apply_extraction(
            &self.world.nodes,
            &self.world.edges,
            &self.spec.methodology,
            TurnExtraction {
                concepts: &concepts,
                embeddings: &embeddings,
                relationships: &relationships,
            },
            &origin,
            &mut new_id,
        );
        let mut tracker = self.world.tracker.clone();
        track_update(&mut tracker, &self.spec.methodology, &update, run.turn);
        let live_after = self.world.live_nodes().count() + update.new_nodes.len()
            - newly_superseded(&self.world.nodes, &update.updated_nodes);
        let label_of = |id: &str| {
            update
                .new_nodes
                .iter()
                .find(|n| n.id == id)
                .map_or_else(|| self.world.label_of(id), |n| n.label.clone())
        };
        let output = GraphUpdateOutput {
            nodes_added: update.new_nodes.iter().map(NodeRef::from).collect(),
            edges_added: update
                .new_edges
                .iter()
                .map(|e| EdgeRef::new(e, label_of))
                .collect(),
            node_count: u32::try_from(live_after).unwrap_or(u32::MAX),
            edge_count: u32::try_from(self.world.edges.len() + update.new_edges.len())
                .unwrap_or(u32::MAX),
        };
        let summary = describe_update(&update);
        let id = self.world.session_id.clone();
        let tracker_json = tracker.persisted();
        let changed_nodes: Vec<_> = update
            .new_nodes
            .iter()
            .chain(&update.updated_nodes)
            .cloned()
            .collect();
        self.commit(run, output, None, &[], |tx| {
            tx.upsert_nodes(&changed_nodes)?;
            tx.insert_edges(&update.new_edges)?;
            tx.update_edges(&update.updated_edges)?;
            tx.update_tracker(&id, &tracker_json)
        })?;
        self.world
            .apply_nodes(&update.updated_nodes, &update.new_nodes);
        self.world
            .apply_edges(&update.updated_edges, &update.new_edges);
        self.world.tracker = tracker;
        Ok(summary)
    }

    /// Stage 4.5: canonical slots for the turn's new nodes, their mappings and the canonical
    /// edges; empty when `enable_canonical_slots` is off or nothing new was added.
    pub(crate) async fn slot_discovery(
        &mut self,
        run: &mut TurnRun,
        events: &EventSink,
    ) -> Result<String, PipelineError> {
        let added: HashSet<&str> = run
            .ctx
            .graph_update()?
            .nodes_added
            .iter()
            .map(|n| n.id.as_str())
            .collect();
        if !self.services.settings.enable_canonical_slots || added.is_empty() {
            let summary = if self.services.settings.enable_canonical_slots {
                "no new nodes"
            } else {
                "disabled (enable_canonical_slots = false)"
            };
            self.commit(run, SlotDiscoveryOutput::default(), None, &[], |_| Ok(()))?;
            return Ok(summary.to_owned());
        }
        let new_nodes: Vec<_> = self
            .world
            .nodes
            .iter()
            .filter(|n| added.contains(n.id.as_str()))
            .cloned()
            .collect();
        let (update, calls) = self.discover(run.turn, &new_nodes, events).await?;
        let mut mappings: Vec<SlotMapping> = self.world.mappings.clone();
        for m in &update.mappings_created {
            match mappings
                .iter_mut()
                .find(|old| old.surface_node_id == m.surface_node_id)
            {
                Some(old) => old.clone_from(m),
                None => mappings.push(m.clone()),
            }
        }
        let mut edge_ids = IdMinter::new(&self.world.session_id, run.turn, "canonical_edge");
        let mut new_id = || edge_ids.mint();
        let canonical_edges = aggregate_edges(
            &self.world.edges,
            &mappings,
            &self.world.canonical_edges,
            &self.world.session_id,
            &mut new_id,
        );
        let mut tracker = self.world.tracker.clone();
        for m in &update.mappings_created {
            tracker.map_to_slot(&m.surface_node_id, &m.canonical_slot_id);
        }
        let output = SlotDiscoveryOutput {
            slots_created: update.slots_created.iter().map(SlotRef::from).collect(),
            slots_updated: update.slots_updated.iter().map(SlotRef::from).collect(),
            mappings_created: update.mappings_created.clone(),
        };
        let summary = format!(
            "{} slots created, {} updated, {} mappings, {} promoted, {} LLM calls",
            output.slots_created.len(),
            output.slots_updated.len(),
            output.mappings_created.len(),
            update.promoted.len(),
            calls.len()
        );
        let id = self.world.session_id.clone();
        let tracker_json = tracker.persisted();
        let changed_slots: Vec<_> = update
            .slots_created
            .iter()
            .chain(&update.slots_updated)
            .cloned()
            .collect();
        self.commit(run, output, None, &calls, |tx| {
            tx.upsert_slots(&changed_slots)?;
            tx.upsert_mappings(&update.mappings_created)?;
            tx.upsert_canonical_edges(&canonical_edges)?;
            tx.update_tracker(&id, &tracker_json)
        })?;
        for slot in update.slots_updated {
            if let Some(old) = self.world.slots.iter_mut().find(|s| s.id == slot.id) {
                *old = slot;
            }
        }
        self.world.slots.extend(update.slots_created);
        self.world.mappings = mappings;
        self.world.canonical_edges = canonical_edges;
        self.world.tracker = tracker;
        Ok(summary)
    }
}
