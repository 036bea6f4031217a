package govern

// GiteaSide is the part of Gitea the core reads and writes through for the clarification
// actions. The gitea package's client satisfies it; nothing else in steward writes to Gitea.
type GiteaSide interface{}
