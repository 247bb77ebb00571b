package codingtools

import (
	"context"
	"fmt"
	"strings"

	"github.com/seed-e9b4dba4/dsh/host/session"
	"github.com/seed-e9b4dba4/dsh/host/tools"
)

const todoDescription = "Replace the session's todo list with the given list (send every item each time, not just changes). " +
	"Use it to plan and track multi-step work: keep exactly one item in_progress while working, mark items completed as soon as they are done, and send an empty list to clear it."

type todoArgs struct {
	Todos *[]session.Todo `json:"todos"`
}

func (s *Set) todoWriteTool() *tools.Definition {
	return &tools.Definition{
		Name:        "todo_write",
		Description: todoDescription,
		Parameters: tools.Object(
			tools.Req("todos", tools.ArrayOf("The complete todo list, in order.", tools.NestedObject("",
				tools.Req("content", tools.String("What to do, in one short imperative sentence.")),
				tools.Req("status", tools.String("The item's state.").OneOf(session.TodoPending, session.TodoInProgress, session.TodoCompleted)),
			))),
		),
		Output:  tools.StringOutput,
		Effect:  tools.EffectState,
		Execute: todoWrite,
		PresentCall: func(call *tools.Call) *tools.CallView {
			return &tools.CallView{Kind: tools.KindThink, Title: "Update todo list", RawInput: rawInput(call)}
		},
	}
}

func todoWrite(_ context.Context, call *tools.Call) (any, error) {
	var a todoArgs
	if err := decodeArgs(nameTodo, call, &a); err != nil {
		return nil, err
	}
	if a.Todos == nil {
		return nil, failf(nameTodo, CodeInvalidArgs, "todos is required; send the complete list (an empty list clears it)")
	}
	todos := append([]session.Todo{}, (*a.Todos)...)
	for i, t := range todos {
		todos[i].Content = strings.TrimSpace(t.Content)
		if todos[i].Content == "" {
			return nil, failf(nameTodo, CodeInvalidArgs, "todos[%d].content is empty", i)
		}
		switch t.Status {
		case session.TodoPending, session.TodoInProgress, session.TodoCompleted:
		default:
			return nil, failf(nameTodo, CodeInvalidArgs, "todos[%d].status must be pending, in_progress or completed (got %q)", i, t.Status)
		}
	}
	if call.Session == nil {
		return nil, failf(nameTodo, CodeNoSession, "todo_write needs a session to record the list in")
	}
	if _, err := call.Session.Append(session.TypeTodoWrite, session.TodoWrite{Todos: todos}); err != nil {
		return nil, failf(nameTodo, CodeIO, "cannot record the todo list: %v", err)
	}
	return renderTodos(todos), nil
}

func renderTodos(todos []session.Todo) string {
	if len(todos) == 0 {
		return "Todo list cleared."
	}
	counts := map[string]int{}
	var b strings.Builder
	for _, t := range todos {
		counts[t.Status]++
	}
	fmt.Fprintf(&b, "Todo list updated: %d completed, %d in progress, %d pending.\n",
		counts[session.TodoCompleted], counts[session.TodoInProgress], counts[session.TodoPending])
	for _, t := range todos {
		mark := "[ ]"
		switch t.Status {
		case session.TodoCompleted:
			mark = "[x]"
		case session.TodoInProgress:
			mark = "[>]"
		}
		b.WriteString(mark + " " + t.Content + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
