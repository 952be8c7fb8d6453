package model

import "sync"

// Workers builds each deployment's timing model once and hands the same one out again: a
// NATS worker's tasks and the explorer's runs ask for a few deployments many times, from
// several goroutines. The zero value is ready to use.
type Workers struct {
	mu           sync.Mutex
	byDeployment map[Deployment]*Worker
}

// Get returns d's timing model, building it (NewWorker) on first use.
func (ws *Workers) Get(d Deployment) (*Worker, error) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w, ok := ws.byDeployment[d]; ok {
		return w, nil
	}
	w, err := NewWorker(d)
	if err != nil {
		return nil, err
	}
	if ws.byDeployment == nil {
		ws.byDeployment = map[Deployment]*Worker{}
	}
	ws.byDeployment[d] = w
	return w, nil
}
