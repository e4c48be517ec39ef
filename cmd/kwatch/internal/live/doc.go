// Package live is kwatch's live view: a resource as a full-screen table
// updated in place, as "watch kubectl get pods" or k9s show it, but driven
// by the informer's events instead of polling.
//
// It has two halves:
//   - Model holds the rows (each with its cells, computed at the model's
//     clock so that ages tick, and its status), the connection's state, and
//     what the user chose to see: a filter, a namespace, a scroll position.
//     Upsert, Delete, SetConn and HandleKey change it; Render draws it at a
//     given time into a Frame of styled text. It knows nothing of terminals,
//     informers or clocks, so sorting, filtering, counts, the namespace pick
//     and ticking ages are tested as plain values.
//   - Run puts a Model on a terminal: it applies Updates sent on a channel
//     and key presses in one goroutine, and redraws at most ten times a
//     second (at once after a key), until its context ends or the user
//     quits. It starts one goroutine, the screen's event reader, and has
//     waited for it when it returns, with the terminal restored.
//
// The terminal library is tcell (github.com/gdamore/tcell/v2), chosen over
// Bubble Tea (v1 or v2) because:
//   - its dependency tree is the smallest: besides tcell, three small
//     modules (gdamore/encoding, lucasb-eyer/go-colorful, rivo/uniseg) and
//     golang.org/x/sys, x/term and x/text are compiled in, where Bubble Tea
//     v2 brings fifteen modules, one of them (ultraviolet) with only
//     pseudo-versions, and v1 as many on older terminal packages;
//   - it has been maintained since 2015 with a stable v2 API, and k9s, the
//     tool people use for this, is built on it;
//   - it is a cell buffer with no framework around it: the model and the
//     loop stay ours (Bubble Tea's program owns both, and the informer's
//     events would have to be posted into it as messages), and tcell's
//     SimulationScreen runs Run in tests without a terminal, under
//     testing/synctest, since it starts no goroutine of its own;
//   - Show sends the terminal only the cells that changed since the last
//     frame, and a resize arrives as an event after which Sync repaints
//     everything at the new size; it honours NO_COLOR.
package live
