package aaa

// IndexedTenants counts the tenants whose RADIUS index is loaded (tests).
func (s *Service) IndexedTenants() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.tenants)
}
