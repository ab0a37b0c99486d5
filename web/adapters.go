package web

import (
	"context"

	"xr/app"
)

// Adapters for the common handler shapes, so a row can name its app call
// directly: parse, call one app function, write.

// actorCall handles a route with no path id and no body.
func actorCall[T any](fn func(context.Context, *app.Actor) (T, error)) HandlerFunc {
	return func(c *Ctx) error {
		out, err := fn(c.R.Context(), c.Actor)
		if err != nil {
			return err
		}
		return c.OK(out)
	}
}

// bodyCall decodes a body of type In and calls fn.
func bodyCall[In, T any](fn func(context.Context, *app.Actor, In) (T, error)) HandlerFunc {
	return bodyWrite(fn, (*Ctx).OK)
}

// createCall is bodyCall answering 201 Created: the row creates a record.
func createCall[In, T any](fn func(context.Context, *app.Actor, In) (T, error)) HandlerFunc {
	return bodyWrite(fn, (*Ctx).Created)
}

func bodyWrite[In, T any](fn func(context.Context, *app.Actor, In) (T, error), write func(*Ctx, any) error) HandlerFunc {
	return func(c *Ctx) error {
		var in In
		if err := c.Decode(&in); err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, in)
		if err != nil {
			return err
		}
		return write(c, out)
	}
}

// idCall calls fn with the {id} path variable.
func idCall[T any](fn func(context.Context, *app.Actor, int64) (T, error)) HandlerFunc {
	return func(c *Ctx) error {
		id, err := c.ID("id")
		if err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, id)
		if err != nil {
			return err
		}
		return c.OK(out)
	}
}

// idBodyCall calls fn with the {id} path variable and a decoded body.
func idBodyCall[In, T any](fn func(context.Context, *app.Actor, int64, In) (T, error)) HandlerFunc {
	return idBodyWrite(fn, (*Ctx).OK)
}

// idCreateCall is idBodyCall answering 201 Created (a record made under {id}).
func idCreateCall[In, T any](fn func(context.Context, *app.Actor, int64, In) (T, error)) HandlerFunc {
	return idBodyWrite(fn, (*Ctx).Created)
}

func idBodyWrite[In, T any](fn func(context.Context, *app.Actor, int64, In) (T, error), write func(*Ctx, any) error) HandlerFunc {
	return func(c *Ctx) error {
		id, err := c.ID("id")
		if err != nil {
			return err
		}
		var in In
		if err := c.Decode(&in); err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, id, in)
		if err != nil {
			return err
		}
		return write(c, out)
	}
}

// idAction calls an action on {id} that returns nothing and answers ok.
func idAction(fn func(context.Context, *app.Actor, int64) error) HandlerFunc {
	return func(c *Ctx) error {
		id, err := c.ID("id")
		if err != nil {
			return err
		}
		if err := fn(c.R.Context(), c.Actor, id); err != nil {
			return err
		}
		return c.OK(map[string]any{"ok": true, "id": id})
	}
}

// bulkCall applies fn to each id of the body and answers the bulk shape.
func bulkCall(fn func(context.Context, *app.Actor, int64) error) HandlerFunc {
	return func(c *Ctx) error {
		var in app.BulkIDs
		if err := c.Decode(&in); err != nil {
			return err
		}
		if err := in.Validate(); err != nil {
			return err
		}
		return c.OK(app.RunBulk(c.R.Context(), in.IDs, func(ctx context.Context, id int64) error { return fn(ctx, c.Actor, id) }))
	}
}

// listCall parses the list query with spec and writes a page.
func listCall[T any](spec app.ListSpec, fn func(context.Context, *app.Actor, app.ListQuery) (app.Page[T], error)) HandlerFunc {
	return func(c *Ctx) error {
		q, err := app.ParseList(c.Query(), spec)
		if err != nil {
			return err
		}
		p, err := fn(c.R.Context(), c.Actor, q)
		if err != nil {
			return err
		}
		return Page(c, p)
	}
}

// pageCall writes the one page fn answers (a list without query options).
func pageCall[T any](fn func(context.Context, *app.Actor) (app.Page[T], error)) HandlerFunc {
	return func(c *Ctx) error {
		p, err := fn(c.R.Context(), c.Actor)
		if err != nil {
			return err
		}
		return Page(c, p)
	}
}

// idListCall is listCall for a list under {id}.
func idListCall[T any](spec app.ListSpec, fn func(context.Context, *app.Actor, int64, app.ListQuery) (app.Page[T], error)) HandlerFunc {
	return func(c *Ctx) error {
		id, err := c.ID("id")
		if err != nil {
			return err
		}
		q, err := app.ParseList(c.Query(), spec)
		if err != nil {
			return err
		}
		p, err := fn(c.R.Context(), c.Actor, id, q)
		if err != nil {
			return err
		}
		return Page(c, p)
	}
}

// oneList writes an un-paginated list: page_size equal to total, has_next false.
func oneList[T any](c *Ctx, rows []T) error {
	if rows == nil {
		rows = []T{}
	}
	return c.List(rows, app.OnePage(len(rows)))
}

// allCall writes an un-paginated list of the caller's (roles, tokens...).
func allCall[T any](fn func(context.Context, *app.Actor) ([]T, error)) HandlerFunc {
	return func(c *Ctx) error {
		out, err := fn(c.R.Context(), c.Actor)
		if err != nil {
			return err
		}
		return oneList(c, out)
	}
}

// idAllCall writes an un-paginated list under the {id} path variable.
func idAllCall[T any](fn func(context.Context, *app.Actor, int64) ([]T, error)) HandlerFunc {
	return func(c *Ctx) error {
		id, err := c.ID("id")
		if err != nil {
			return err
		}
		out, err := fn(c.R.Context(), c.Actor, id)
		if err != nil {
			return err
		}
		return oneList(c, out)
	}
}
