package suite

func informerCases() []Case { return nil }
