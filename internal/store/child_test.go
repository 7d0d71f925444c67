package store

func runChildIfAsked() bool { return false }
