package graph

// ResetTemps undoes RemoveTempFiles for the tests that follow.
func ResetTemps() {
	temps.Lock()
	temps.stopped = false
	temps.Unlock()
}
