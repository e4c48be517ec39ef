// Package backoff computes retry delays: exponential with jitter, reset
// after a stretch of health. It holds no timers and reads no clock; callers
// pass the time, so the policy is tested without sleeping.
package backoff
