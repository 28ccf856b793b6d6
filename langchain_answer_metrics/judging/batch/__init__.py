"""Batch mode: the judge requests of a run sent through an OpenAI-compatible Batch API.

The design, in one paragraph: the metrics run unchanged, their steps async as always,
on copies whose OpenAI judges are stand-ins (:mod:`.standin`). A stand-in's real model
builds each request (the same body the live path sends) and reads each reply (the same
parsing, then the same tolerant reader); in between, the request is a line waiting in
:class:`~.lines.BatchLines`, and the step awaits it. When the run has settled (every
sample in flight waits on a line), :class:`~.rounds.BatchRounds` sends every waiting
line at once, one batch file per model and endpoint (split at the limits), waits for
the batches, and resolves the lines from their output files. The steps that were
waiting go on, and what they ask next (a verification after a decomposition, a re-ask
after an unreadable reply) waits for the next round. So a run takes as many rounds as
its deepest chain of dependent steps, identical requests stay shared (one line), and
every rule of the live path (re-asks, votes, usage, failures per sample) holds as is.
The batches are kept on disk as soon as created (:mod:`.state`), so a stopped run
resumes with the same command and never sends the same request twice.
"""
