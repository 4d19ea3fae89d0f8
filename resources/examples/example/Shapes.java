package example;

import java.util.List;

/**
 * Polymorphism for the trace: {@link Shape#area()} is one call site in {@link #totalArea} whose
 * receiver is a {@link Circle} or a {@link Rectangle}, so the trace records both dynamic classes.
 */
final class Shapes {
    private Shapes() {}

    static List<Shape> sample() {
        return List.of(new Circle(1.0), new Rectangle(2.0, 3.0), new Circle(0.5), new Rectangle(4.0, 0.25));
    }

    static void printAreas(List<Shape> shapes) {
        for (Shape shape : shapes) {
            System.out.printf("%s has area %.3f%n", shape.describe(), shape.area());
        }
    }

    static double totalArea(List<Shape> shapes) {
        double total = 0;
        for (Shape shape : shapes) {
            total += shape.area(); // an INVOKEINTERFACE with two receiver classes
        }
        return total;
    }
}

interface Shape {
    double area();

    String describe();
}

final class Circle implements Shape {
    private final double radius;

    Circle(double radius) {
        this.radius = radius;
    }

    @Override
    public double area() {
        return Math.PI * radius * radius;
    }

    @Override
    public String describe() {
        return "circle r=" + radius;
    }
}

final class Rectangle implements Shape {
    private final double width;
    private final double height;

    Rectangle(double width, double height) {
        this.width = width;
        this.height = height;
    }

    @Override
    public double area() {
        return width * height;
    }

    @Override
    public String describe() {
        return "rectangle " + width + "x" + height;
    }
}
