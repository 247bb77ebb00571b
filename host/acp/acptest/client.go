package acptest

import (
	"context"

	sdk "github.com/coder/acp-go-sdk"
)

// NoEditorCapabilities answers every client method that an editor serves
// only when it advertises file system or terminal capabilities with
// method-not-found. A test client that advertises neither embeds it and
// implements SessionUpdate and RequestPermission itself.
type NoEditorCapabilities struct{}

func (NoEditorCapabilities) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, sdk.NewMethodNotFound("fs/read_text_file")
}

func (NoEditorCapabilities) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, sdk.NewMethodNotFound("fs/write_text_file")
}

func (NoEditorCapabilities) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, sdk.NewMethodNotFound("terminal/create")
}

func (NoEditorCapabilities) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, sdk.NewMethodNotFound("terminal/kill")
}

func (NoEditorCapabilities) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, sdk.NewMethodNotFound("terminal/output")
}

func (NoEditorCapabilities) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, sdk.NewMethodNotFound("terminal/release")
}

func (NoEditorCapabilities) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, sdk.NewMethodNotFound("terminal/wait_for_exit")
}

var _ sdk.Client = struct {
	NoEditorCapabilities
	sessionAndPermission
}{}

// sessionAndPermission stands for what an embedding client implements.
type sessionAndPermission interface {
	SessionUpdate(context.Context, sdk.SessionNotification) error
	RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error)
}
