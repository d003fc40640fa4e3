package analysis

// The stuck channel of [scoreSite]: log-odds weights, summed onto
// stuckPrior and turned into a confidence by the logistic function. A
// weight of +1 multiplies the odds that the group is stuck by e (2.7);
// docs/DESIGN.md ("Scoring") lists them with what each means.
const (
	// stuckPrior: a parked group, knowing nothing else, is stuck about
	// one time in twenty (most parked goroutines wait for work).
	stuckPrior = -3.0

	wForever        = 7.0  // select {} or a nil channel: nothing can ever wake it
	wLock           = 1.0  // a lock is rarely held for long in a healthy program
	wSend           = 0.5  // a send waits for one particular partner
	wMinutesPerLn   = 1.2  // × ln(1+minutes) the runtime says they waited
	wMinutesMax     = 5.0  //
	wPersistBase    = 1.0  // parked identically in consecutive snapshots …
	wPersistPerLn   = 0.8  // … + this × ln(1+seconds between them)
	wPersistMax     = 4.0  //
	wPersistFrozen  = 0.6  // × when nothing else in the process changed either
	wChurn          = -1.5 // × share of members that were not there (or elsewhere) before
	wHandedOn       = -6.0 // × √(share of a lock's earlier waiters that have got it since)
	wCycle          = 4.5  // a wait-for cycle: each waits for what only the others can release
	wUnreached      = 2.5  // nothing that can run holds what they wait on
	wUnreachedLive  = 1.5  // the same while other goroutines can run (a global may hide a waker)
	wAllAsleep      = 1.5  // no goroutine of the program can run at all
	wNoHolder       = 1.0  // a lock (or Cond) nobody else holds: never released, or locked twice
	wNoPartner      = 1.5  // a channel whose every holder waits on the same side
	wNoWorker       = 1.5  // a WaitGroup no goroutine that could call Done holds
	wNoWakerVia     = 0.5  // × when only what the object was reached through is known
	wMention        = -10  // a goroutine that can run holds what they wait on
	wPossible       = -3.0 // × share that a goroutine able to run may hold though no frame shows it (a closure, a sibling, a global)
	wWoken          = -8.0 // × share of members the runtime's counters show woken between snapshots
	wSignalled      = -6.0 // × share waiting on a Cond whose tickets show it signalled far more often than it is waited on now
	wFamily         = -4.0 // their creator or children can run and may feed them
	wFamilyProducer = -1.5 // … for a lock, send or WaitGroup their creator rarely releases
	wIdlePool       = -10  // idle workers their owner can still feed
	wTopOfLoop      = -1.2 // waiting for work at the top of their loop: more often a consequence
	wLibrary        = -3.0 // no frame of the program's own code, while the program runs elsewhere
	wSelfHeld       = 4.5  // × share whose source shows they hold the lock they wait for (as a cycle of one)
	wNoReleaser     = 4.0  // × share waiting on what no statement of the program can release
	wDecided        = 4.0  // × share the program read as Go shows no goroutine that can run can ever wake
	wTimerBound     = -1.0 // × share parked only because a minute's wait rules out shorter timer cases: a longer one may remain
	wAsleepBound    = 0.5  // × wAllAsleep when the claim rests on such waits
)
