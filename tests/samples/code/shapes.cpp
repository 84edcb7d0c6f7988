#include <string>

namespace geo {

/// A point in the plane.
template <typename T>
struct Point {
    T x, y;
};

class Shape {
public:
    Shape() = default;
    virtual ~Shape();
    virtual double area() const = 0;
    std::string name() const { return name_; }
    bool operator==(const Shape &other) const;

private:
    std::string name_;
};

using Size = unsigned long;

double Shape::area() const {
    return 0.0;
}

}  // namespace geo

int main(int argc, char **argv) {
    geo::Point<int> p{1, 2};
    return 0;
}
