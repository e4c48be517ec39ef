package informer

// phase is what the informer is doing.
type phase uint8

const (
	phaseList       phase = iota // paginated list into a new store, then commit
	phaseStreamList              // watch with sendInitialEvents into a new store, then commit, then watch
	phaseWatch                   // watch from st.rv, applying events to the store
	// phaseConfirm asks whether the server has reached st.rv before
	// watching from it again, after a watch that ended early.
	phaseConfirm
)

func (p phase) String() string {
	switch p {
	case phaseList:
		return "list"
	case phaseStreamList:
		return "streaming-list"
	case phaseWatch:
		return "watch"
	case phaseConfirm:
		return "confirm"
	}
	return "unknown"
}

// streamSupport is what the informer may use for its lists.
type streamSupport uint8

const (
	// streamAuto (ListAuto): streaming lists, until the first sign that
	// the server does not honour one; then streamNo. A streaming list that
	// worked is no proof the next one will: a server may honour
	// sendInitialEvents from resourceVersion "" and serve it from an RV as
	// a plain watch (an API server that predates the parameter, an
	// aggregated one), so a success never promotes this to streamOnly.
	streamAuto streamSupport = iota
	streamOnly               // ListStreaming: the user asked for streaming lists only
	streamNo                 // paginated lists only: ListPaged, or ListAuto after a fallback
)

// state is the informer's whole protocol state between phases. Every
// transition is a function in resume.go.
type state struct {
	phase phase
	// rv is the resourceVersion the store reflects: the last list's, the
	// last event's or the last bookmark's. "" before the first list.
	rv string
	// listRV and listMatch are what the next list asks for.
	listRV    string
	listMatch string
	// fullList makes the next paginated list a single unpaginated one
	// (after a continue token expired).
	fullList  bool
	streaming streamSupport
	// streamFailures counts the streaming lists in a row that the server
	// accepted and ended (or that broke) before their initial-events-end
	// bookmark; in streamAuto, maxStreamListFailures of them fall back to
	// paginated lists.
	streamFailures int
	// synced is true once a list has been committed to the store.
	synced bool
	// distrust makes the next commit report every object it keeps as
	// updated, whatever its RV: set for a relist of a server found behind
	// us, which reuses resourceVersions.
	distrust bool
	// relisted: the last watch ended in a 410 and no watch has worked
	// since; another 410 then backs off.
	relisted bool
	// confirmFailures counts the confirmations in a row that failed.
	confirmFailures int
	// restored: the store was loaded from a snapshot and no list has been
	// committed since. catchUp is the RV the server reported when it
	// confirmed the snapshot's: the informer counts as synced once its RV
	// reaches it (see SnapshotOptions).
	restored bool
	catchUp  string
}

// listPhase is the phase a list takes with what we know of the server.
func (st state) listPhase() phase {
	if st.streaming == streamNo || st.fullList {
		return phaseList
	}
	return phaseStreamList
}
