// Package events records core/v1 Events about objects, as client-go's
// EventRecorder does, through package client and without k8s.io/api.
//
//   - Recorder.Event(obj, type, reason, message) and Eventf never block:
//     each event takes a token from its object's bucket (DefaultBurst 25,
//     then one per DefaultRefill, 5 minutes: client-go's spam filter) and
//     goes into a bounded queue (DefaultQueueSize). An event past either is
//     dropped and counted in Stats and the recorder's metrics.
//   - Run, started by the caller beside its workers, writes the queue. A
//     new event is created as client-go writes it: metadata.name
//     "<object>.<hex Unix nanoseconds>" (unique per recorder), in the
//     object's namespace ("default" for a cluster-scoped object),
//     involvedObject, reason, message, type, source.component,
//     firstTimestamp = lastTimestamp, count 1, reportingComponent and
//     reportingInstance.
//   - A repeat (the same object, type, reason and message within Window of
//     the last occurrence, DefaultWindow 10 minutes) is a merge patch of
//     the stored Event's count and lastTimestamp, as client-go's correlator
//     sends; if the server no longer has it, it is created again with the
//     count so far. The recorder remembers at most MaxObjects Events and
//     objects (DefaultMaxObjects 4096), forgetting the least recently seen.
//   - A failed write is counted and logged at debug level, not retried:
//     events are best effort, and a retry could only delay the next. After
//     a failed patch the count is kept, so the next repeat's patch makes up
//     for it; after a failed create the next occurrence creates again.
//   - Event names are "<object>.<hex>" made a valid DNS subdomain: an
//     object name that is not one (a ClusterRole's "system:...") or is too
//     long for the suffix is adjusted rather than refused by the server.
package events
