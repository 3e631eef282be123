//! Windows drawn over the screen: help, quit and end confirmations, the failed-turn popup, the
//! end screen and moderator mode's regenerate picker. Each is a read-only widget over the
//! [`App`]; the regenerate picker also owns its small selection state.

mod confirm;
mod end;
mod error;
mod help;
mod regenerate;
mod whatif;

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::widgets::{Clear, Widget};

pub use confirm::ConfirmPopup;
pub use end::EndPopup;
pub use error::ErrorPopup;
pub use help::HelpPopup;
pub use regenerate::{Outcome, RegeneratePopup, RegenerateState};
pub use whatif::{WhatIfOutcome, WhatIfPopup, WhatIfState, save as save_whatif};

use super::app::{App, Popup};

/// A centred rectangle of at most `width` × `height` inside `area`, cleared for drawing.
pub(crate) fn window(area: Rect, width: u16, height: u16, buf: &mut Buffer) -> Rect {
    let [row] = Layout::vertical([Constraint::Length(height.min(area.height))])
        .flex(Flex::Center)
        .areas(area);
    let [rect] = Layout::horizontal([Constraint::Length(width.min(area.width))])
        .flex(Flex::Center)
        .areas(row);
    Clear.render(rect, buf);
    rect
}

/// Draws the topmost popup of `app`, if any, over `area`.
pub fn render_top(app: &App, area: Rect, buf: &mut Buffer) {
    let Some(popup) = app.ui.popups.first() else {
        return;
    };
    match popup {
        Popup::Help => (&HelpPopup::new(app)).render(area, buf),
        Popup::Quit => (&ConfirmPopup::quit(app)).render(area, buf),
        Popup::EndConfirm => (&ConfirmPopup::end_interview(app)).render(area, buf),
        Popup::Error => (&ErrorPopup::new(app)).render(area, buf),
        Popup::End => (&EndPopup::new(app)).render(area, buf),
        Popup::Regenerate(state) => (&RegeneratePopup::new(app, state)).render(area, buf),
        Popup::WhatIf => {
            if let Some(state) = &app.ui.whatif {
                (&WhatIfPopup::new(app, state)).render(area, buf);
            }
        }
    }
}
