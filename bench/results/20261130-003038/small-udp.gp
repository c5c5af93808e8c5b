# gnuplot small-udp.gp (in this directory) redraws small-udp.png
set terminal pngcairo size 820,640 font 'sans,9'
set output 'small-udp.png'
set datafile missing 'nan'
set title "small-udp: small UDP packets: iperf3 -u through the stack, XDP_DROP of generated frames\n5 rounds; bars: median, whiskers: min-max" noenhanced
set style fill solid 0.5 border -1
set grid ytics
set yrange [0:*]
set xrange [-0.6:7.6]
set bmargin 13
set xtics rotate by -40 left noenhanced
set key top right noenhanced
set ylabel "pps ratio to the group's first row"
set boxwidth 0.6
plot 1 with lines dt 2 lc 'gray' notitle, 'small-udp.dat' using ($1+0):3:4:5:(0.6):xtic(2) with boxerrorbars title "× first row"
