package render

// DefaultDesign is the built-in design of a kind, used when none is chosen;
// nil for an unknown kind. Each call returns a fresh copy.
func DefaultDesign(kind string) *Design {
	switch kind {
	case KindCardSheet:
		return defaultCardSheet()
	case KindReceipt:
		return defaultReceipt()
	case KindInvoice:
		return defaultInvoice()
	case KindHotspotPage:
		return defaultHotspotPage()
	}
	return nil
}

const (
	brandDark = "#1f3a5f"
	inkColor  = "#222222"
	mutedInk  = "#555555"
)

// defaultCardSheet: 85×54 mm cards (a bank card's size) on A4, two across
// and five down.
func defaultCardSheet() *Design {
	return &Design{
		Kind:       KindCardSheet,
		Page:       Size{Width: 210, Height: 297, Margin: 7},
		Card:       &CardGrid{Width: 85, Height: 54, Gap: 3},
		Background: "#ffffff",
		Elements: []Element{
			{Type: "rect", X: 0.3, Y: 0.3, W: 84.4, H: 53.4, Radius: 3, Stroke: brandDark, StrokeWidth: 0.3},
			{Type: "rect", X: 0.3, Y: 0.3, W: 84.4, H: 10, Radius: 3, Fill: brandDark},
			{Type: "rect", X: 0.3, Y: 6, W: 84.4, H: 4.3, Fill: brandDark},
			{Type: "text", X: 4, Y: 1.5, W: 50, H: 8, Text: "{tenant_name}", FontSize: 11, Bold: true, Color: "#ffffff", Align: "start"},
			{Type: "text", X: 54, Y: 1.5, W: 27, H: 8, Text: "{face_value} {currency}", FontSize: 11, Bold: true, Color: "#ffffff", Align: "right"},
			{Type: "text", X: 4, Y: 12.5, W: 52, H: 5, Text: "{plan}", FontSize: 8, Color: mutedInk, Align: "start"},
			{Type: "text", X: 4, Y: 19, W: 54, H: 9, Text: "{code}", FontSize: 15, Bold: true, Color: inkColor, LetterSpacing: 1.2},
			{Type: "text", X: 4, Y: 30, W: 54, H: 4.5, Text: "User {username}   Pass {password}", FontSize: 7, Color: inkColor},
			{Type: "text", X: 4, Y: 36, W: 54, H: 4.5, Text: "Serial {serial}", FontSize: 7, Color: mutedInk},
			{Type: "text", X: 4, Y: 41.5, W: 54, H: 4.5, Text: "Expires {expiration}", FontSize: 7, Color: mutedInk},
			{Type: "qr", X: 60, Y: 14, W: 21, H: 21, Value: "{qr_payload}", Color: inkColor},
			{Type: "line", X: 4, Y: 48, X2: 81, Y2: 48, Stroke: brandDark, StrokeWidth: 0.2},
			{Type: "text", X: 4, Y: 48.8, W: 77, H: 4, Text: "Scan the code or enter it on the portal", FontSize: 5.5, Color: mutedInk, Align: "center"},
		},
	}
}

// defaultReceipt: an 80 mm thermal-printer receipt.
func defaultReceipt() *Design {
	return &Design{
		Kind:       KindReceipt,
		Page:       Size{Width: 80, Height: 120, Margin: 4},
		Background: "#ffffff",
		Elements: []Element{
			{Type: "text", X: 4, Y: 4, W: 72, H: 8, Text: "{tenant_name}", FontSize: 14, Bold: true, Color: inkColor, Align: "center"},
			{Type: "text", X: 4, Y: 13, W: 72, H: 5, Text: "Receipt {number}", FontSize: 9, Color: inkColor, Align: "center"},
			{Type: "text", X: 4, Y: 18, W: 72, H: 5, Text: "{date}", FontSize: 8, Color: mutedInk, Align: "center"},
			{Type: "line", X: 4, Y: 25, X2: 76, Y2: 25, Stroke: inkColor, StrokeWidth: 0.2},
			{Type: "text", X: 4, Y: 27, W: 72, H: 5, Text: "Customer: {customer}", FontSize: 8, Color: inkColor},
			{Type: "text", X: 4, Y: 32, W: 72, H: 5, Text: "Login: {username}", FontSize: 8, Color: inkColor},
			{Type: "text", X: 4, Y: 37, W: 72, H: 5, Text: "Plan: {plan}", FontSize: 8, Color: inkColor},
			{Type: "line", X: 4, Y: 43, X2: 76, Y2: 43, Stroke: inkColor, StrokeWidth: 0.2},
			{Type: "text", X: 4, Y: 45, W: 72, H: 40, Text: "{items}", FontSize: 8, Color: inkColor},
			{Type: "line", X: 4, Y: 87, X2: 76, Y2: 87, Stroke: inkColor, StrokeWidth: 0.2},
			{Type: "text", X: 4, Y: 89, W: 72, H: 7, Text: "Total {amount} {currency}", FontSize: 12, Bold: true, Color: inkColor, Align: "right"},
			{Type: "text", X: 4, Y: 98, W: 72, H: 5, Text: "Cashier: {cashier}", FontSize: 7, Color: mutedInk},
			{Type: "barcode", X: 10, Y: 104, W: 60, H: 10, Value: "{number}", Symbology: "code128", Color: inkColor},
		},
	}
}

// defaultInvoice: an A4 invoice.
func defaultInvoice() *Design {
	return &Design{
		Kind:       KindInvoice,
		Page:       Size{Width: 210, Height: 297, Margin: 15},
		Background: "#ffffff",
		Elements: []Element{
			{Type: "rect", X: 0, Y: 0, W: 210, H: 30, Fill: brandDark},
			{Type: "text", X: 15, Y: 9, W: 120, H: 14, Text: "{tenant_name}", FontSize: 22, Bold: true, Color: "#ffffff", Align: "start"},
			{Type: "text", X: 135, Y: 11, W: 60, H: 10, Text: "INVOICE", FontSize: 16, Bold: true, Color: "#ffffff", Align: "end"},
			{Type: "text", X: 15, Y: 40, W: 90, H: 6, Text: "Invoice {number}", FontSize: 12, Bold: true, Color: inkColor},
			{Type: "text", X: 15, Y: 47, W: 90, H: 6, Text: "Date: {date}", FontSize: 10, Color: inkColor},
			{Type: "text", X: 115, Y: 40, W: 80, H: 6, Text: "{customer}", FontSize: 12, Bold: true, Color: inkColor, Align: "right"},
			{Type: "text", X: 115, Y: 47, W: 80, H: 6, Text: "Login: {username}", FontSize: 10, Color: inkColor, Align: "right"},
			{Type: "text", X: 115, Y: 53, W: 80, H: 6, Text: "Plan: {plan}", FontSize: 10, Color: inkColor, Align: "right"},
			{Type: "line", X: 15, Y: 65, X2: 195, Y2: 65, Stroke: inkColor, StrokeWidth: 0.3},
			{Type: "text", X: 15, Y: 68, W: 180, H: 150, Text: "{items}", FontSize: 10, Color: inkColor},
			{Type: "line", X: 15, Y: 222, X2: 195, Y2: 222, Stroke: inkColor, StrokeWidth: 0.3},
			{Type: "text", X: 95, Y: 226, W: 100, H: 10, Text: "Total {amount} {currency}", FontSize: 16, Bold: true, Color: inkColor, Align: "right"},
			{Type: "text", X: 15, Y: 270, W: 120, H: 6, Text: "Issued by {cashier}", FontSize: 9, Color: mutedInk},
			{Type: "qr", X: 170, Y: 255, W: 25, H: 25, Value: "{number}", Color: inkColor},
		},
	}
}

// defaultHotspotPage: the banner of a hotspot login page.
func defaultHotspotPage() *Design {
	return &Design{
		Kind:       KindHotspotPage,
		Page:       Size{Width: 120, Height: 70},
		Background: "#f4f6fa",
		Elements: []Element{
			{Type: "rect", X: 0, Y: 0, W: 120, H: 18, Fill: brandDark},
			{Type: "text", X: 6, Y: 4, W: 108, H: 10, Text: "{tenant_name}", FontSize: 16, Bold: true, Color: "#ffffff", Align: "center"},
			{Type: "text", X: 6, Y: 24, W: 78, H: 6, Text: "Buy a card: {shop_url}", FontSize: 7, Color: inkColor},
			{Type: "text", X: 6, Y: 32, W: 78, H: 6, Text: "Sign up: {signup_url}", FontSize: 7, Color: inkColor},
			{Type: "text", X: 6, Y: 40, W: 78, H: 6, Text: "My account: {portal_url}", FontSize: 7, Color: inkColor},
			{Type: "text", X: 6, Y: 52, W: 78, H: 6, Text: "Support {support_phone}", FontSize: 9, Bold: true, Color: inkColor},
			{Type: "qr", X: 88, Y: 24, W: 26, H: 26, Value: "{portal_url}", Color: inkColor},
			{Type: "rect", X: 86, Y: 22, W: 30, H: 30, Radius: 2, Stroke: mutedInk, StrokeWidth: 0.3},
		},
	}
}
