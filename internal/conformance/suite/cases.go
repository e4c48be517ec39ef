package suite

// Cases returns every case of the suite, in the order they run.
func Cases() []Case {
	var all []Case
	for _, group := range [][]Case{listCases(), watchCases(), metaCases(), authCases(), goneCases(), futureCases(), informerCases(), protoCases(), protoBodyCases(), clientCases(), writeCases(), eventsCases(), tableCases(), controllerCases(), leaderCases(), shardCases(), deleteCases(), lagCases(), overdueCases(), webhookCases()} {
		all = append(all, group...)
	}
	return all
}
