//! Points on a plane.

use std::fmt;

pub const ORIGIN: Point = Point { x: 0, y: 0 };
static mut COUNTER: u32 = 0;

/// A point.
/// With two doc lines.
#[derive(Debug, Clone)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

pub enum Shape {
    Circle(f64),
    Square { side: f64 },
}

pub trait Area {
    fn area(&self) -> f64;
    fn describe(&self) -> String {
        format!("area {}", self.area())
    }
}

impl Point {
    /// Makes a point.
    pub fn new(x: i32, y: i32) -> Self {
        Point { x, y }
    }
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

pub type Pair = (Point, Point);

mod tests {
    #[test]
    fn it_works() {
        assert_eq!(2 + 2, 4);
    }
}

macro_rules! square {
    ($x:expr) => { $x * $x };
}

union IntOrFloat {
    i: u32,
    f: f32,
}
