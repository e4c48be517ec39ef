// Package testutil holds small helpers shared by kwatch's tests.
package testutil
