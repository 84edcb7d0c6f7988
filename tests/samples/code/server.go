// Package server serves shapes.
package server

import (
	"fmt"
	"net/http"
)

const MaxConns = 16

var (
	defaultPort = 8080
	ErrClosed   = fmt.Errorf("closed")
)

// Server holds the listener.
// It is safe for concurrent use.
type Server struct {
	Addr    string
	handler http.Handler
}

type Handler interface {
	Serve(w http.ResponseWriter, r *http.Request) error
}

type (
	ID    int64
	Alias = string
)

// NewServer makes a server.
func NewServer(addr string) *Server {
	return &Server{Addr: addr}
}

// Start starts it.
func (s *Server) Start() error {
	handler := func() { fmt.Println("func inside a string") }
	handler()
	return nil
}

func (s Server) String() string { return s.Addr }

func Map[T any, U any](xs []T, f func(T) U) []U {
	return nil
}
