package attention

import "steward/model"

// The needs of model entries, as model.Need decides them (one vocabulary with model): a real
// collision, a waiting question and an unavailable source need a person; an orphan with a
// sanctioned action needs an operator; the rest is routine.

func sourceNeed(h model.SourceHealth) model.Need { return h.Need() }

func contentionNeed(c *model.Contention) model.Need { return c.Need() }

func orphanNeed(o *model.Orphan) model.Need { return o.Need() }
