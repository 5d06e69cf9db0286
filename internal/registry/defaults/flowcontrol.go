package defaults

import (
	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
)

// Upstream's flowcontrol v1 defaults.
const (
	flowSchemaDefaultMatchingPrecedence int32 = 1000
	plcDefaultHandSize                  int32 = 8
	plcDefaultQueues                    int32 = 64
	plcDefaultQueueLengthLimit          int32 = 50
	plcDefaultNominalConcurrencyShares  int32 = 30
)

// FlowSchema applies upstream's defaults.
func FlowSchema(fs *flowcontrolv1.FlowSchema) {
	if fs.Spec.MatchingPrecedence == 0 {
		fs.Spec.MatchingPrecedence = flowSchemaDefaultMatchingPrecedence
	}
}

// PriorityLevelConfiguration applies upstream's defaults.
func PriorityLevelConfiguration(plc *flowcontrolv1.PriorityLevelConfiguration) {
	int32If := func(p **int32, v int32) {
		if *p == nil {
			*p = &v
		}
	}
	if e := plc.Spec.Exempt; e != nil {
		int32If(&e.NominalConcurrencyShares, 0)
		int32If(&e.LendablePercent, 0)
	}
	if l := plc.Spec.Limited; l != nil {
		int32If(&l.NominalConcurrencyShares, plcDefaultNominalConcurrencyShares)
		int32If(&l.LendablePercent, 0)
		if q := l.LimitResponse.Queuing; q != nil {
			if q.HandSize == 0 {
				q.HandSize = plcDefaultHandSize
			}
			if q.Queues == 0 {
				q.Queues = plcDefaultQueues
			}
			if q.QueueLengthLimit == 0 {
				q.QueueLengthLimit = plcDefaultQueueLengthLimit
			}
		}
	}
}
