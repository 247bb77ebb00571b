package sessionquery

import "github.com/seed-e9b4dba4/dsh/host/session"

// checkCompatible fails with SOURCE_CONFLICT when two observations of one id
// disagree on identity (session.Compatible).
func checkCompatible(a, b session.Header) error {
	if session.Compatible(a, b) {
		return nil
	}
	return Errorf(CodeSourceConflict, `session source headers conflict for session "%s"`, a.ID)
}
