import FanoutCore

/// Queue mode: the run's work arrives from its CI build's shared queue (`QueueFeed` reserves it) instead of being
/// planned whole at the start. The dispatcher keeps doing what it does with it (batches, stealing, retries, time
/// limits); it also says when every test of a queue item has its verdict here, so the item can be completed.
extension Dispatcher {
    /// Opens the feed: slots with nothing to do wait for work from the queue instead of ending. Items of
    /// `unserved` destinations (no agent of this job serves them, as in every job of the build: they share fanout.yml)
    /// are not queued here: they settle at once as not run, as their tests would in a run without a queue.
    ///
    /// `servedBy`: the agents of this job that serve each destination. Once all of a destination's agents are done
    /// for the run (`agentRetired`: never usable, their set-up failed, lost for good), its items settle as not run
    /// too, instead of waiting in the queue here for a slot that will never take them.
    func openFeed(unserved: [String: String] = [:], servedBy: [String: Set<String>] = [:]) {
        feedOpen = true
        queueItems = QueueItems(unserved: unserved, servedBy: servedBy)
    }

    /// An agent takes no more work in this run. In queue mode, a destination none of whose agents is left is
    /// unserved from now on: what of it is queued here settles as not run (and what the feed offers later too).
    func agentRetired(_ name: String) {
        let unserved = queueItems.retire(agent: name, feedOpen: feedOpen)
        guard feedOpen else { return }
        for destination in unserved { queueItems.unservedWork(dispatch.remove(destination: destination)) }
        reportStatus()
        wakeAll()
    }

    /// Work reserved from the queue joins the local queue; its tests join those the run asks for.
    func offer(_ items: [WorkItem]) {
        guard !items.isEmpty else { return }
        ledger.expect(items)
        queueTaken += items
        let ledger = self.ledger
        let runnable = queueItems.offer(items, attempts: { ledger.attemptCount(of: $0) })
        dispatch.requeue(runnable)
        reportStatus()
        wakeAll()
    }

    /// The queue has nothing more for this job: slots end once the work here is done.
    func closeFeed() {
        feedOpen = false
        wakeAll()
    }

    /// How many items the feed should reserve now: a slot waits and nothing is queued here.
    var demand: Int {
        guard !stopped, scheduler.isEmpty, dispatch.stolenParts.isEmpty else { return 0 }
        return dispatch.idle.values.reduce(0, +)
    }

    /// Queue items none of whose work is queued, running or waiting here any more (their leftovers, retries and stolen
    /// parts keep the item's number): each with its tests' results. They are no longer open.
    func takeSettled() -> [(item: Int, results: [TestResult])] {
        // Interrupted: what was cut short is not a verdict. The items stay open; the feed gives them back.
        guard !stopped, !queueItems.open.isEmpty else { return [] }
        var busy = Set(scheduler.queuedItems.compactMap(\.queueItem))
        for r in running.values { busy.formUnion(r.unit.items.compactMap(\.queueItem)) }
        for part in dispatch.stolenParts { busy.formUnion(part.items.compactMap(\.queueItem)) }
        return queueItems.settle(busy: busy, ledger: ledger)
    }
}
